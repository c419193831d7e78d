import Dispatch
import Foundation
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// The one subscription surface (`ObserverSource`): every source offers the
/// same forms, `limit:` and `replay:` combine as documented, and several
/// keys subscribe as one source.
final class SubscriptionSurfaceTests: XCTestCase {
    final class Target: Sendable {}

    /// Subscribes every sending-thread and queue form to `source`, each with
    /// `limit: 2`, sends three values and returns what each form received.
    private func everyForm<Source: ObserverSource>(
        of source: Source, send: (Int) -> Void
    ) -> [[Int]] where Source.Value == Int {
        let target = Target()
        let queue = DispatchQueue(label: "surface")
        let received = (0..<4).map { _ in Received<Int>() }
        let tokens = [
            source.subscribe(limit: 2) { received[0].append($0) },
            source.subscribe(target, limit: 2) { _, value in received[1].append(value) },
            source.subscribe(delivery: .queue(queue), limit: 2) { received[2].append($0) },
            source.subscribe(target, delivery: .queue(queue), limit: 2) { _, value in received[3].append(value) },
        ]
        for value in 1...3 { send(value) }
        queue.sync {}
        XCTAssertEqual(tokens.map(\.isActive), [false, false, false, false], "every limit is spent")
        return received.map(\.values)
    }

    func testEventAndObservableValueOfferTheSameFormsWithTheSameLimit() {
        let event = Event<Int>()
        XCTAssertEqual(everyForm(of: event) { event.send($0) }, Array(repeating: [1, 2], count: 4))
        let value = ObservableValue(0)
        XCTAssertEqual(everyForm(of: value) { value.value = $0 }, Array(repeating: [1, 2], count: 4))
        XCTAssertEqual(value.subscribersCount, 0)
    }

    func testReplayedValueIsTheFirstOfTheLimit() {
        let value = ObservableValue(10)
        let received = Received<Int>()
        let token = value.replaying.subscribe(limit: 2) { received.append($0) }
        value.value = 11
        value.value = 12
        XCTAssertEqual(received.values, [10, 11])
        XCTAssertFalse(token.isActive)
    }

    func testReplayWithLimitOneDeliversOnlyTheCurrentValue() {
        let value = ObservableValue("now")
        let received = Received<String>()
        let target = Target()
        let closure = value.replaying.subscribe(limit: 1) { received.append("closure \($0)") }
        let weak = value.replaying.subscribe(target, limit: 1) { _, current in received.append("target \(current)")
        }
        value.value = "later"
        XCTAssertEqual(received.values, ["closure now", "target now"])
        XCTAssertFalse(closure.isActive)
        XCTAssertFalse(weak.isActive)
        XCTAssertEqual(value.subscribersCount, 0)
    }

    func testReplayOnAQueueComesBeforeEveryLaterValue() {
        let value = ObservableValue(0)
        let queue = DispatchQueue(label: "replay")
        let received = Received<Int>()
        let token = value.replaying.subscribe(delivery: .queue(queue), limit: 3) { received.append($0) }
        for next in 1...5 { value.value = next }
        queue.sync {}
        XCTAssertEqual(received.values, [0, 1, 2])
        XCTAssertFalse(token.isActive)
    }

    func testActorReplayIsTheMailboxFirstItemAndCounts() async throws {
        let value = ObservableValue(5)
        let recorder = Recorder()
        value.replaying.subscribe(isolatedTo: recorder, limit: 2) { recorder, current in recorder.record(current) }
        value.value = 6
        value.value = 7
        try await settleDeliveries()
        let values = await recorder.values
        XCTAssertEqual(values, [5, 6])
    }

    func testMainActorFormsOfObservableValueReplayAndLimit() {
        let value = ObservableValue(1)
        let received = Received<Int>()
        let token = value.replaying.subscribe(limit: 2) { @MainActor current in received.append(current) }
        value.value = 2
        value.value = 3
        runMainLoop { received.count >= 2 }
        XCTAssertEqual(received.values, [1, 2])
        XCTAssertFalse(token.isActive)
    }

    // MARK: KeySelection

    func testKeySelectionIsOneSubscriptionOverItsDistinctKeys() {
        let moves = KeyedEvent<String, Int>()
        let received = Received<String>()
        let token = moves.forKeys(["north", "south", "north"]).subscribe { direction, steps in
            received.append("\(direction) \(steps)")
        }
        moves.send(1, forKey: "north")
        moves.send(2, forKey: "east")
        moves.send(3, forKey: "south")
        XCTAssertEqual(received.values, ["north 1", "south 3"], "a key listed twice delivers once")
        XCTAssertEqual(moves.subscribersCount, 1)
        XCTAssertEqual(moves.keyCount, 2)
        XCTAssertTrue(token.cancel())
        XCTAssertEqual(moves.keyCount, 0, "cancel removes it from every key")
        moves.send(4, forKey: "north")
        XCTAssertEqual(received.count, 2)
    }

    func testKeySelectionLimitCountsOverAllKeys() {
        let moves = KeyedEvent<String, Int>()
        let received = Received<String>()
        let token = moves.forKeys(["a", "b"]).subscribe(limit: 3) { key, value in received.append("\(key)\(value)") }
        for value in 1...3 {
            moves.send(value, forKey: "a")
            moves.send(value, forKey: "b")
        }
        XCTAssertEqual(received.values, ["a1", "b1", "a2"])
        XCTAssertFalse(token.isActive)
    }

    func testKeySelectionWithNoKeysSubscribesNothing() {
        let moves = KeyedEvent<String, Int>()
        let token = moves.forKeys([]).subscribe { _, _ in XCTFail("no key was selected") }
        XCTAssertFalse(token.isActive)
        XCTAssertEqual(moves.keyCount, 0)
    }

    func testKeySelectionTargetQueueAndActorForms() async throws {
        let moves = KeyedEvent<String, Int>()
        let queue = DispatchQueue(label: "keys")
        let target = Target()
        let received = Received<String>()
        let selection = moves.forKeys(["a", "b"])
        selection.subscribe(target) { _, item in received.append("target \(item.key)\(item.value)") }
        let queued = selection.subscribe(delivery: .queue(queue)) { key, value in
            received.append("queue \(key)\(value)")
        }
        let recorder = Recorder()
        selection.subscribe(isolatedTo: recorder) { recorder, item in recorder.record(key: item.key, item.value) }
        moves.send(1, forKey: "a")
        moves.send(2, forKey: "b")
        queue.sync {}
        XCTAssertEqual(
            received.values.sorted(), ["queue a1", "queue b2", "target a1", "target b2"])
        try await settleDeliveries()
        let keyed = await recorder.keyed
        XCTAssertEqual(keyed, ["a=1", "b=2"])
        queued.cancel()
    }
}
