import ObserverSwiftCompat
import ObserverTestSupport
import XCTest

// IndefiniteObservable's README, "How to make an observable", as a user
// writes it in Swift 6 mode: the closures are `@Sendable` (values may arrive
// on any thread) and the producer object is `Sendable`. (The README as
// printed, in Swift 5 mode, is Tests/SeedCompatibility's.)
// These file-private types shadow ObserverSwift's ready-made
// `ValueObserver` / `ValueObservable` in this file only, as a user's own
// types would in their module.

private final class ValueObserver<T>: Observer, Sendable {
    typealias Value = T

    init(_ next: @escaping @Sendable (T) -> Void) {
        self.next = next
    }

    let next: @Sendable (T) -> Void
}

private final class ValueObservable<T>: IndefiniteObservable<ValueObserver<T>> {
    func subscribe(_ next: @escaping @Sendable (T) -> Void) -> Subscription {
        return super.subscribe(observer: ValueObserver(next))
    }
}

final class IndefiniteObservableReadmeTests: XCTestCase {
    func testReadmeSynchronousStream() {
        let observable = ValueObservable<Int> { observer in
            observer.next(5)
            return noopDisconnect
        }
        let seen = Received<Int>()
        let subscription = observable.subscribe { value in
            seen.append(value)
        }
        subscription.unsubscribe()
        XCTAssertEqual(seen.values, [5])
    }

    func testReadmeAsynchronousStreamUsingBlocks() {
        let callbacks = Event<Int>()
        func registerSomeCallback(_ callback: @escaping @Sendable (Int) -> Void) -> Subscription {
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
        let seen = Received<Int>()
        let subscription = observable.subscribe { value in
            seen.append(value)
        }
        callbacks.send(1)
        subscription.unsubscribe()
        callbacks.send(2)
        XCTAssertEqual(seen.values, [1])
        XCTAssertEqual(callbacks.subscribersCount, 0)
    }

    func testReadmeProducerObjectWithInitialState() {
        // "How to create a synchronous stream using objects", with an Event
        // standing for the gesture recognizer.
        // Immutable, so Sendable: the gesture may call it from any thread.
        final class DragConnection: Sendable {
            typealias Value = Int

            init(subscribedTo gesture: Event<Int>, observer: ValueObserver<Value>) {
                self.gesture = gesture
                self.observer = observer
                gesture.subscribe(self) { connection, value in connection.didPan(value) }
                // Populate the observer with the current gesture state.
                observer.next(0)
            }

            func didPan(_ value: Int) {
                observer.next(value)
            }

            func disconnect() {
                gesture.unsubscribe(self)
            }

            let gesture: Event<Int>
            let observer: ValueObserver<Value>
        }

        let pan = Event<Int>()
        let dragStream = ValueObservable<DragConnection.Value> { observer in
            return DragConnection(subscribedTo: pan, observer: observer).disconnect
        }
        let seen = Received<Int>()
        let subscription = dragStream.subscribe {
            seen.append($0)
        }
        pan.send(3)
        subscription.unsubscribe()
        pan.send(4)
        XCTAssertEqual(seen.values, [0, 3])
        XCTAssertEqual(pan.subscribersCount, 0, "disconnect unsubscribed the connection")
    }

    func testUserSubclassCanBeShared() {
        var connects = 0
        let observable = ValueObservable<Int> { observer in
            connects += 1
            observer.next(1)
            return noopDisconnect
        }
        let shared = observable.share { forward in ValueObserver(forward) }
        let seen = Received<Int>()
        let a = shared.subscribe(observer: ValueObserver { seen.append($0) })
        let b = shared.subscribe(observer: ValueObserver { seen.append($0 * 10) })
        XCTAssertEqual(connects, 1)
        XCTAssertEqual(seen.values, [1], "the first subscriber gets the connect-time value")
        a.unsubscribe()
        b.unsubscribe()
    }
}
