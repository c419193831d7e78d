import ObserverSwift
import XCTest

// IndefiniteObservable's README, "How to make an observable", as a user
// writes it. The one change: our `Observer` requires `func next(_:)` (the
// issue's contract) where IndefiniteObservable's README stores a closure
// property named `next`. These file-private types shadow ObserverSwift's
// ready-made `ValueObserver` / `ValueObservable` in this file only, as a
// user's own types would in their module.

private final class ValueObserver<T>: Observer {
    typealias Value = T

    init(_ next: @escaping (T) -> Void) {
        self.nextHandler = next
    }

    func next(_ value: T) {
        nextHandler(value)
    }

    let nextHandler: (T) -> Void
}

private final class ValueObservable<T>: IndefiniteObservable<ValueObserver<T>> {
    func subscribe(_ next: @escaping (T) -> Void) -> Subscription {
        return super.subscribe(observer: ValueObserver(next))
    }
}

final class IndefiniteObservableReadmeTests: XCTestCase {
    func testReadmeSynchronousStream() {
        let observable = ValueObservable<Int> { observer in
            observer.next(5)
            return noopDisconnect
        }
        var seen: [Int] = []
        let subscription = observable.subscribe { value in
            seen.append(value)
        }
        subscription.unsubscribe()
        XCTAssertEqual(seen, [5])
    }

    func testReadmeAsynchronousStreamUsingBlocks() {
        let callbacks = Event<Int>()
        func registerSomeCallback(_ callback: @escaping (Int) -> Void) -> Subscription {
            callbacks.subscribe(callback)
        }
        func unregisterCallback(_ token: Subscription) {
            token.cancel()
        }

        let observable = ValueObservable<Int> { observer in
            let someToken = registerSomeCallback { callbackValue in
                observer.next(callbackValue)
            }

            return {
                unregisterCallback(someToken)
            }
        }
        var seen: [Int] = []
        let subscription = observable.subscribe { value in
            seen.append(value)
        }
        callbacks.send(1)
        subscription.unsubscribe()
        callbacks.send(2)
        XCTAssertEqual(seen, [1])
        XCTAssertEqual(callbacks.subscribersCount, 0)
    }

    func testReadmeProducerObjectWithInitialState() {
        // "How to create a synchronous stream using objects", with an Event
        // standing for the gesture recognizer.
        final class DragConnection {
            typealias Value = Int

            init(subscribedTo gesture: Event<Int>, observer: ValueObserver<Value>) {
                self.gesture = gesture
                self.observer = observer
                token = gesture.subscribe(self) { connection, value in connection.didPan(value) }
                // Populate the observer with the current gesture state.
                observer.next(0)
            }

            func didPan(_ value: Int) {
                observer.next(value)
            }

            func disconnect() {
                token?.cancel()
                gesture = nil
            }

            var gesture: Event<Int>?
            var token: Subscription?
            let observer: ValueObserver<Value>
        }

        let pan = Event<Int>()
        let dragStream = ValueObservable<DragConnection.Value> { observer in
            return DragConnection(subscribedTo: pan, observer: observer).disconnect
        }
        var seen: [Int] = []
        let subscription = dragStream.subscribe {
            seen.append($0)
        }
        pan.send(3)
        subscription.unsubscribe()
        pan.send(4)
        XCTAssertEqual(seen, [0, 3])
    }

    func testUserSubclassCanBeShared() {
        var connects = 0
        let observable = ValueObservable<Int> { observer in
            connects += 1
            observer.next(1)
            return noopDisconnect
        }
        let shared = observable.share { forward in ValueObserver(forward) }
        var seen: [Int] = []
        let a = shared.subscribe(observer: ValueObserver { seen.append($0) })
        let b = shared.subscribe(observer: ValueObserver { seen.append($0 * 10) })
        XCTAssertEqual(connects, 1)
        XCTAssertEqual(seen, [1], "the first subscriber gets the connect-time value")
        a.unsubscribe()
        b.unsubscribe()
    }
}
