import Dispatch
import Foundation
import ObserverSwiftCompat
import ObserverTestSupport
import XCTest

/// A producer that counts its connections and disconnections.
private final class CountingProducer: @unchecked Sendable {
    // @unchecked: counters are thread-safe; `observers` is guarded by `lock`.
    let connects = LockedCounter()
    let disconnects = LockedCounter()
    private let lock = NSLock()
    private var observers: [Int: ValueObserver<Int>] = [:]
    private var nextKey = 0

    lazy var stream = ValueObservable<Int> { [unowned self] observer in
        connects.increment()
        lock.lock()
        let key = nextKey
        nextKey += 1
        observers[key] = observer
        lock.unlock()
        return { [unowned self] in
            disconnects.increment()
            lock.lock()
            observers[key] = nil
            lock.unlock()
        }
    }

    /// Sends to every connected observer (the producer's own list, as a
    /// user's producer would have).
    func emit(_ value: Int) {
        lock.lock()
        let current = Array(observers.values)
        lock.unlock()
        current.forEach { $0.next(value) }
    }

    var connected: Int {
        lock.lock()
        defer { lock.unlock() }
        return observers.count
    }
}

final class IndefiniteObservableTests: XCTestCase {
    func testValuesSentDuringConnectReachTheSubscriber() {
        let numbers = ValueObservable<Int> { observer in
            observer.next(1)
            observer.next(2)
            return noopDisconnect
        }
        let seen = Received<Int>()
        let subscription = numbers.subscribe { seen.append($0) }
        XCTAssertEqual(seen.values, [1, 2])
        withExtendedLifetime(subscription) {}
    }

    func testEachSubscriptionConnectsItsOwnProducer() {
        let producer = CountingProducer()
        let first = Received<Int>()
        let second = Received<Int>()
        let a = producer.stream.subscribe { first.append($0) }
        let b = producer.stream.subscribe { second.append($0) }
        XCTAssertEqual(producer.connects.value, 2)
        producer.emit(7)
        XCTAssertEqual(first.values, [7])
        XCTAssertEqual(second.values, [7])
        a.unsubscribe()
        producer.emit(8)
        XCTAssertEqual(first.values, [7])
        XCTAssertEqual(second.values, [7, 8])
        b.unsubscribe()
        XCTAssertEqual(producer.disconnects.value, 2)
    }

    func testUnsubscribeCallsTheDisconnectExactlyOnce() {
        var disconnects = 0
        let stream = ValueObservable<Int> { _ in { disconnects += 1 } }
        let subscription = stream.subscribe { _ in }
        XCTAssertTrue(subscription.isActive)
        subscription.unsubscribe()
        subscription.unsubscribe()
        XCTAssertFalse(subscription.cancel(), "cancel is the same operation")
        XCTAssertEqual(disconnects, 1)
        XCTAssertFalse(subscription.isActive)
    }

    func testCancelIsUnsubscribeAndReportsTheFirstCall() {
        var disconnects = 0
        let stream = ValueObservable<Int> { _ in { disconnects += 1 } }
        let subscription = stream.subscribe { _ in }
        XCTAssertTrue(subscription.cancel())
        XCTAssertFalse(subscription.cancel())
        XCTAssertEqual(disconnects, 1)
    }

    func testUnsubscribeFromTwoThreadsAtOnceDisconnectsOnce() {
        for _ in 0..<2_000 {
            let disconnects = LockedCounter()
            let stream = ValueObservable<Int> { _ in { disconnects.increment() } }
            let subscription = stream.subscribe { _ in }
            DispatchQueue.concurrentPerform(iterations: 2) { _ in subscription.unsubscribe() }
            XCTAssertEqual(disconnects.value, 1)
        }
    }

    func testDisconnectMayUnsubscribeItsOwnSubscription() {
        var disconnects = 0
        var subscription: Subscription?
        let stream = ValueObservable<Int> { _ in
            return {
                disconnects += 1
                subscription?.unsubscribe()  // reentrant: a no-op
            }
        }
        subscription = stream.subscribe { _ in }
        subscription?.unsubscribe()
        XCTAssertEqual(disconnects, 1)
    }

    func testSubscriptionOutlivesTheObservableAndABagDisconnects() {
        let producer = CountingProducer()
        let seen = Received<Int>()
        var bag: SubscriptionBag? = SubscriptionBag()
        ValueObservable<Int> { observer in producer.stream.subscribe { observer.next($0) }.unsubscribe }
            .subscribe { seen.append($0) }
            .store(in: bag!)
        producer.emit(1)
        XCTAssertEqual(seen.values, [1])
        bag = nil
        producer.emit(2)
        XCTAssertEqual(seen.values, [1])
        XCTAssertEqual(producer.disconnects.value, 1)
    }

    func testNoopDisconnectDoesNothing() {
        let disconnect: Disconnect = noopDisconnect
        disconnect()
        let stream = IndefiniteObservable<ValueObserver<Int>> { observer in
            observer.next(1)
            return noopDisconnect
        }
        let seen = Received<Int>()
        stream.subscribe(observer: ValueObserver { seen.append($0) }).unsubscribe()
        XCTAssertEqual(seen.values, [1])
    }

    func testValueObserverCallsItsClosure() {
        let seen = Received<String>()
        let observer = ValueObserver<String> { seen.append($0) }
        observer.next("a")
        XCTAssertEqual(seen.values, ["a"])
    }

    func testAsynchronousProducerWithACallbackRegistry() {
        // IndefiniteObservable's "asynchronous stream using blocks", with an
        // Event standing for the callback API.
        let callbacks = Event<Int>()
        let stream = ValueObservable<Int> { observer in
            let token = callbacks.subscribe { observer.next($0) }
            return { token.cancel() }
        }
        let received = Received<Int>()
        let subscription = stream.subscribe { received.append($0) }
        JoinableThread { callbacks.send(5) }.join()
        subscription.unsubscribe()
        callbacks.send(6)
        XCTAssertEqual(received.values, [5])
        XCTAssertEqual(callbacks.subscribersCount, 0)
    }
}
