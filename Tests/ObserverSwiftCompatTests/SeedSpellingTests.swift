import Dispatch
import Foundation
import ObserverSwiftCompat
import ObserverTestSupport
import XCTest

/// A weak target recording what is handed to it, from any thread.
private final class Sink: Sendable {
    let received = SharedVariable<[String]>([])
    func append(_ text: String) { received.update { $0.append(text) } }
}

final class SeedSpellingTests: XCTestCase {
    // MARK: SwiftEvents

    func testTriggerAndNotifySendAndCount() {
        let event = Event<String>()
        let sink = Sink()
        event.subscribe(sink) { sink, value in sink.append(value) }
        event.trigger("one")
        event.notify("two")
        event.send("three")
        XCTAssertEqual(sink.received.value, ["one", "two", "three"])
        XCTAssertEqual(event.triggersCount, 3)
    }

    func testAddSubscriberRemoveSubscriberAndRemoveAllSubscribers() {
        let event = Event<Int>()
        let first = Sink()
        let second = Sink()
        event.addSubscriber(first) { sink, value in sink.append("a\(value)") }
        event.addSubscriber(second, queue: nil) { sink, value in sink.append("b\(value)") }
        event.send(1)
        XCTAssertEqual(event.removeSubscriber(first), 1)
        XCTAssertEqual(event.removeSubscriber(first), 0, "removing twice is a no-op")
        event.send(2)
        XCTAssertEqual(event.removeAllSubscribers(), 1)
        event.send(3)
        XCTAssertEqual(first.received.value, ["a1"])
        XCTAssertEqual(second.received.value, ["b1", "b2"])
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testValueOnlyHandlersAreBoundedByTheirTarget() {
        let event = Event<Int>()
        let value = ObservableValue(0)
        var owner: Sink? = Sink()
        let received = SharedVariable<[Int]>([])
        event.subscribe(owner!) { number in received.update { $0.append(number) } }
        value.bind(owner!) { number in received.update { $0.append(number * 10) } }
        event.notify(1)
        value.value = 2
        owner = nil
        event.notify(3)
        value.value = 4
        XCTAssertEqual(received.value, [1, 20], "the target bounds the subscription's life")
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertEqual(value.observersCount, 0)
    }

    func testValueOnlyHandlerOnAQueue() {
        let event = Event<Int>()
        let owner = Sink()
        let queue = DispatchQueue(label: "SeedSpellingTests")
        let received = SharedVariable<[Int]>([])
        event.subscribe(owner, queue: queue) { number in
            dispatchPrecondition(condition: .onQueue(queue))
            received.update { $0.append(number) }
        }
        event.notify(1)
        event.notify(2)
        queue.sync {}
        XCTAssertEqual(received.value, [1, 2])
    }

    /// SwiftEvents calls, during one send, a subscriber that an earlier
    /// handler of that send removed (it iterates over a copy). ObserverSwift
    /// does not: a cancelled subscription is never called once the cancel
    /// has returned. The migration guide states the difference.
    func testASubscriberRemovedByAnEarlierHandlerIsNotCalledByTheSameSend() {
        let event = EventTS<Int>()
        let first = Sink()
        let second = Sink()
        event.subscribe(first) { number in
            first.append("first \(number)")
            event.unsubscribeAll()
        }
        event.subscribe(second) { number in second.append("second \(number)") }
        event.notify(1)
        XCTAssertEqual(first.received.value, ["first 1"])
        XCTAssertEqual(second.received.value, [], "removed before its turn: not called")
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testThreadSafeTypesAreTheThreadSafeClassesThemselves() {
        XCTAssertTrue(EventTS<Int>.self == Event<Int>.self)
        XCTAssertTrue(ObservableTS<Int>.self == ObservableValue<Int>.self)
        let event = EventTS<Int>()
        let observable = ObservableTS(0)
        let owner = Sink()
        let calls = SharedVariable(0)
        event.subscribe(owner) { _ in calls.update { $0 += 1 } }
        observable.bind(owner) { _ in calls.update { $0 += 1 } }
        DispatchQueue.concurrentPerform(iterations: 1_000) { index in
            event.notify(index)
            observable <<< index
        }
        XCTAssertEqual(event.triggersCount, 1_000)
        XCTAssertEqual(observable.triggersCount, 1_000)
        XCTAssertEqual(calls.value, 2_000)
    }

    // MARK: Flowduino

    func testThreadSafeClassesAreTheClassesThemselves() {
        XCTAssertTrue(ObservableThreadSafeClass.self == ObservableClass.self)
        XCTAssertTrue(KeyedObservableThreadSafeClass.self == KeyedObservableClass.self)
    }

    // MARK: HSObserver

    func testHSObserverCentreNameAndStaticPostByName() {
        let name = Notification.Name("SeedSpellingTests.post")
        let received = SharedVariable(0)
        let observer = HSObserver(forName: name, queue: nil, activate: true) { _ in received.update { $0 += 1 } }
        XCTAssertTrue(observer.centre === NotificationCenter.default)
        XCTAssertEqual(observer.name, name)
        NotificationCenter.post(name: name)
        NotificationCenter.post(name: name, object: nil, userInfo: ["k": 1])
        XCTAssertEqual(received.value, 2)
    }

    func testHSObserverNamesAreTheNotificationAdapters() {
        XCTAssertTrue(HSObserver.self == NotificationObserver.self)
        XCTAssertTrue((any HSHasObservers).self == (any HasObservers).self)
        XCTAssertTrue((any HSObserves).self == (any Observes).self)
    }
}
