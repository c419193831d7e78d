import Dispatch
import Foundation
import ObserverSwiftCompat
import ObserverTestSupport
import XCTest

/// A producer with one upstream callback list that counts connections.
private final class Source: @unchecked Sendable {
    // @unchecked: every stored property is thread-safe.
    let callbacks = Event<Int>()
    let connects = LockedCounter()
    let disconnects = LockedCounter()

    var stream: ValueObservable<Int> {
        ValueObservable<Int> { [self] observer in
            connects.increment()
            let token = callbacks.subscribe { observer.next($0) }
            return { [self] in
                token.cancel()
                disconnects.increment()
            }
        }
    }
}

final class SharedStreamTests: XCTestCase {
    func testShareConnectsOnceAndFansOut() {
        let source = Source()
        let shared = source.stream.share()
        let a = Received<Int>()
        let b = Received<Int>()
        let first = shared.subscribe { a.append($0) }
        let second = shared.subscribe { b.append($0) }
        XCTAssertEqual(source.connects.value, 1)
        XCTAssertEqual(source.callbacks.subscribersCount, 1, "one upstream connection")
        source.callbacks.send(1)
        XCTAssertEqual(a.values, [1])
        XCTAssertEqual(b.values, [1])
        first.unsubscribe()
        XCTAssertEqual(source.disconnects.value, 0, "still one subscriber")
        source.callbacks.send(2)
        XCTAssertEqual(a.values, [1])
        XCTAssertEqual(b.values, [1, 2])
        second.unsubscribe()
        second.unsubscribe()
        XCTAssertEqual(source.disconnects.value, 1, "the last one leaving disconnects")
    }

    func testShareReconnectsForTheNextFirstSubscriber() {
        let source = Source()
        let shared = source.stream.share()
        shared.subscribe { _ in }.unsubscribe()
        let seen = Received<Int>()
        let again = shared.subscribe { seen.append($0) }
        XCTAssertEqual(source.connects.value, 2)
        source.callbacks.send(5)
        XCTAssertEqual(seen.values, [5])
        again.unsubscribe()
        XCTAssertEqual(source.disconnects.value, 2)
    }

    func testValuesSentDuringTheSharedConnectReachTheFirstSubscriber() {
        var connects = 0
        let shared = ValueObservable<Int> { observer in
            connects += 1
            observer.next(1)
            observer.next(2)
            return noopDisconnect
        }.share()
        let first = Received<Int>()
        let second = Received<Int>()
        let a = shared.subscribe { first.append($0) }
        let b = shared.subscribe { second.append($0) }
        XCTAssertEqual(first.values, [1, 2])
        XCTAssertEqual(second.values, [], "later subscribers join the running connection: no replay")
        XCTAssertEqual(connects, 1)
        a.unsubscribe()
        b.unsubscribe()
    }

    func testSubscriberMaySubscribeAndUnsubscribeDuringTheFirstConnect() {
        let shared = ValueObservable<Int> { observer in
            observer.next(1)
            return noopDisconnect
        }.share()
        let inner = SharedVariable<Subscription?>(nil)
        let innerSeen = Received<Int>()
        let outer = shared.subscribe { _ in
            inner.value = shared.subscribe { innerSeen.append($0) }  // no deadlock
        }
        XCTAssertNotNil(inner.value)
        inner.value?.unsubscribe()
        outer.unsubscribe()
        XCTAssertEqual(innerSeen.values, [])
    }

    func testConcurrentSubscribersBalanceConnectsAndDisconnects() {
        let source = Source()
        let shared = source.stream.share()
        let stable = LockedCounter()
        let keeper = shared.subscribe { _ in stable.increment() }
        let churners = (0..<3).map { _ in
            JoinableThread {
                for _ in 0..<1_000 {
                    shared.subscribe { _ in }.unsubscribe()
                }
            }
        }
        let sender = JoinableThread {
            for value in 0..<5_000 { source.callbacks.send(value) }
        }
        churners.forEach { $0.join() }
        sender.join()
        XCTAssertEqual(source.connects.value, 1, "the keeper held the one connection throughout")
        XCTAssertEqual(stable.value, 5_000)
        keeper.unsubscribe()
        XCTAssertEqual(source.disconnects.value, 1)

        // Without a keeper, connections come and go but always balance.
        let churners2 = (0..<3).map { _ in
            JoinableThread {
                for _ in 0..<1_000 { shared.subscribe { _ in }.unsubscribe() }
            }
        }
        churners2.forEach { $0.join() }
        XCTAssertEqual(source.connects.value, source.disconnects.value)
        XCTAssertEqual(source.callbacks.subscribersCount, 0)
    }
}
