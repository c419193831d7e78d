import Foundation
import ObserverSwift

// IndefiniteObservable's README ("How to make an observable" and the guides
// after it). One change: ObserverSwift's `Observer` requires `func next(_:)`
// where the README stores a closure property named `next`. The README defines
// its own `ValueObserver`/`ValueObservable`; a user's own types shadow
// ObserverSwift's ready-made ones, so they are namespaced here only to keep
// this file's other flows apart.

enum OwnTypes {
    final class ValueObserver<T>: Observer {
        typealias Value = T

        init(_ next: @escaping (T) -> Void) {
            self.nextHandler = next
        }

        func next(_ value: T) {
            nextHandler(value)
        }

        let nextHandler: (T) -> Void
    }

    final class ValueObservable<T>: IndefiniteObservable<ValueObserver<T>> {
        func subscribe(_ next: @escaping (T) -> Void) -> Subscription {
            return super.subscribe(observer: ValueObserver(next))
        }
    }
}

/// A block-based callback API, as the asynchronous-stream guide assumes.
final class CallbackRegistry {
    private var callbacks: [Int: (Int) -> Void] = [:]
    private var nextToken = 0

    func register(_ callback: @escaping (Int) -> Void) -> Int {
        nextToken += 1
        callbacks[nextToken] = callback
        return nextToken
    }

    func unregister(_ token: Int) { callbacks[token] = nil }
    func fire(_ value: Int) { for callback in callbacks.values { callback(value) } }
    var count: Int { callbacks.count }
}

func indefiniteObservableFlows() {
    var seen: [Int] = []
    let observable = OwnTypes.ValueObservable<Int> { observer in
        observer.next(5)
        return noopDisconnect
    }
    let first = observable.subscribe { value in
        seen.append(value)
    }
    first.unsubscribe()
    check(seen == [5], "IndefiniteObservable synchronous stream with the README's own types")

    let registry = CallbackRegistry()
    let asynchronous = ValueObservable<Int> { observer in
        let someToken = registry.register { callbackValue in
            observer.next(callbackValue)
        }

        return {
            registry.unregister(someToken)
        }
    }
    var values: [Int] = []
    let subscription = asynchronous.subscribe { value in
        values.append(value)
    }
    registry.fire(7)
    subscription.unsubscribe()
    registry.fire(8)
    check(values == [7] && registry.count == 0, "IndefiniteObservable asynchronous stream and unsubscribe")
}
