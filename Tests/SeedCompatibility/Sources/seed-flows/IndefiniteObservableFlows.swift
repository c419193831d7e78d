import Foundation
import ObserverSwiftCompat

// IndefiniteObservable's README ("How to make an observable" and the guides
// after it), as printed: the README's own `ValueObserver` stores its `next`
// closure in a `let`, which satisfies `Observer`'s requirement. A user's own
// types shadow ObserverSwiftCompat's ready-made ones of the same names, as
// here. Left out: "How to create a synchronous stream using objects", which
// needs UIKit.

final class ValueObserver<T>: Observer {
    typealias Value = T

    init(_ next: @escaping (T) -> Void) {
        self.next = next
    }

    let next: (T) -> Void
}

final class ValueObservable<T>: IndefiniteObservable<ValueObserver<T>> {
    func subscribe(_ next: @escaping (T) -> Void) -> Subscription {
        return super.subscribe(observer: ValueObserver(next))
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
    let observable = ValueObservable<Int> { observer in
        observer.next(5)
        return noopDisconnect
    }
    let first = observable.subscribe { value in
        seen.append(value)
    }
    first.unsubscribe()
    check(seen == [5], "IndefiniteObservable synchronous stream with the README's own types (let next)")

    let registry = CallbackRegistry()
    func registerSomeCallback(_ callback: @escaping (Int) -> Void) -> Int { registry.register(callback) }
    func unregisterCallback(_ token: Int) { registry.unregister(token) }
    let asynchronous = ValueObservable<Int> { observer in
        let someToken = registerSomeCallback { callbackValue in
            observer.next(callbackValue)
        }

        return {
            unregisterCallback(someToken)
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

    // The library's ready-made pair, as ObserverSwiftCompat ships it.
    var library: [Int] = []
    let ready = ObserverSwiftCompat.ValueObservable<Int> { observer in
        observer.next(1)
        return noopDisconnect
    }
    ready.subscribe { library.append($0) }.unsubscribe()
    check(library == [1], "ObserverSwiftCompat's ValueObservable")
}
