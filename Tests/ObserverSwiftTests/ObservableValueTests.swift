import Dispatch
import Foundation
import ObserverSwift
import XCTest

private final class Label {
    var texts: [String] = []
}

final class ObservableValueTests: XCTestCase {
    // MARK: Creating, reading, setting

    func testBothInitializersStoreTheValue() {
        XCTAssertEqual(ObservableValue(3).value, 3)
        XCTAssertEqual(ObservableValue(value: "a").value, "a")
    }

    func testSettingNotifiesWithTheNewValue() {
        let number = ObservableValue(0)
        var seen: [Int] = []
        number.addObserver { seen.append($0) }
        number.value = 1
        number.value = 2
        XCTAssertEqual(seen, [1, 2])
        XCTAssertEqual(number.value, 2)
    }

    func testOperatorSetsTheValueAndNotifies() {
        let number = ObservableValue(0)
        var seen: [Int] = []
        number.addObserver { seen.append($0) }
        number <<< 5
        number <<< number.value + 1  // assignment precedence: no parentheses needed
        XCTAssertEqual(number.value, 6)
        XCTAssertEqual(seen, [5, 6])
    }

    // MARK: Binding targets

    func testBindPassesTheLiveTargetAndTheValue() {
        let title = ObservableValue("")
        let label = Label()
        title.bind(label) { label, text in label.texts.append(text) }
        title.value = "Inbox"
        XCTAssertEqual(label.texts, ["Inbox"])
        XCTAssertEqual(title.observersCount, 1)
    }

    func testBindHoldsTheTargetWeaklyAndForgetsItWhenItDies() {
        let title = ObservableValue("")
        var calls = 0
        var label: Label? = Label()
        weak let weakLabel = label
        title.bind(label!) { _, _ in calls += 1 }
        label = nil
        XCTAssertNil(weakLabel, "bind must not retain the target")
        title.value = "x"
        XCTAssertEqual(calls, 0)
        XCTAssertEqual(title.observersCount, 0)
    }

    func testUnbindRemovesOnlyThatTargetAndUnknownTargetIsANoOp() {
        let title = ObservableValue("")
        let first = Label()
        let second = Label()
        title.bind(first) { label, text in label.texts.append(text) }
        title.bind(first) { label, text in label.texts.append(text + "!") }
        title.bind(second) { label, text in label.texts.append(text) }
        XCTAssertEqual(title.unbind(first), 2)
        XCTAssertEqual(title.unbind(first), 0)
        XCTAssertEqual(title.unbind(Label()), 0)
        title.value = "a"
        XCTAssertEqual(first.texts, [])
        XCTAssertEqual(second.texts, ["a"])
    }

    func testUnbindAllRemovesBindingsButKeepsAddedObservers() {
        let number = ObservableValue(0)
        let label = Label()
        var added: [Int] = []
        number.bind(label) { label, value in label.texts.append("\(value)") }
        number.addObserver { added.append($0) }
        XCTAssertEqual(number.unbindAll(), 1)
        number.value = 1
        XCTAssertEqual(label.texts, [])
        XCTAssertEqual(added, [1])
        XCTAssertEqual(number.observersCount, 1)
    }

    func testBindTokenCancelsThatBindingAlone() {
        let number = ObservableValue(0)
        let label = Label()
        let token = number.bind(label) { label, value in label.texts.append("a\(value)") }
        number.bind(label) { label, value in label.texts.append("b\(value)") }
        token.cancel()
        number.value = 1
        XCTAssertEqual(label.texts, ["b1"])
    }

    // MARK: Closure observers (minimal recipe)

    func testRemoveObserverWithTokenStopsOnlyThatObserver() {
        let number = ObservableValue(value: 0)
        var first: [Int] = []
        var second: [Int] = []
        let token = number.addObserver { first.append($0) }
        number.addObserver { second.append($0) }
        XCTAssertTrue(number.removeObserver(token))
        XCTAssertFalse(number.removeObserver(token), "a second removal is a no-op")
        number.value = 1
        XCTAssertEqual(first, [])
        XCTAssertEqual(second, [1])
    }

    func testRemoveObserverIgnoresAForeignToken() {
        let number = ObservableValue(value: 0)
        let other = ObservableValue(value: 0)
        var otherSeen: [Int] = []
        let foreign = other.addObserver { otherSeen.append($0) }
        XCTAssertFalse(number.removeObserver(foreign))
        other.value = 1
        XCTAssertEqual(otherSeen, [1], "the foreign observer must survive")
        XCTAssertTrue(foreign.isActive)
    }

    func testRemoveObserverWithoutArgumentRemovesAddedObserversButNotBindings() {
        let number = ObservableValue(value: 0)
        let label = Label()
        var added = 0
        number.addObserver { _ in added += 1 }
        number.addObserver { _ in added += 1 }
        number.bind(label) { label, value in label.texts.append("\(value)") }
        XCTAssertEqual(number.removeObserver(), 2)
        number.value = 1
        XCTAssertEqual(added, 0)
        XCTAssertEqual(label.texts, ["1"])
        XCTAssertEqual(number.removeObserver(), 0)
    }

    func testRemoveAllObserversRemovesBoth() {
        let number = ObservableValue(value: 0)
        let label = Label()
        number.addObserver { _ in }
        number.bind(label) { _, _ in }
        XCTAssertEqual(number.removeAllObservers(), 2)
        XCTAssertEqual(number.observersCount, 0)
    }

    // MARK: Counting

    func testObserversCountAndTriggersCount() {
        let number = ObservableValue(0)
        XCTAssertEqual(number.observersCount, 0)
        XCTAssertEqual(number.triggersCount, 0)
        let token = number.addObserver { _ in }
        number.bind(Label()) { _, _ in }  // target dies at once
        XCTAssertEqual(number.observersCount, 1)
        number.value = 1
        number.value = 2
        XCTAssertEqual(number.triggersCount, 2)
        token.cancel()
        XCTAssertEqual(number.observersCount, 0)
        number.value = 3
        XCTAssertEqual(number.triggersCount, 3, "a set with no observers still triggers")
        number.resetTriggersCount()
        XCTAssertEqual(number.triggersCount, 0)
    }

    // MARK: Replay

    func testReplayDeliversTheCurrentValueThenLaterOnes() {
        let number = ObservableValue(7)
        let label = Label()
        var added: [Int] = []
        number.bind(label, replay: true) { label, value in label.texts.append("\(value)") }
        number.addObserver(replay: true) { added.append($0) }
        XCTAssertEqual(label.texts, ["7"])
        XCTAssertEqual(added, [7])
        number.value = 8
        XCTAssertEqual(label.texts, ["7", "8"])
        XCTAssertEqual(added, [7, 8])
        XCTAssertEqual(number.triggersCount, 1, "a replay is not a trigger")
    }

    func testNoReplayByDefault() {
        let number = ObservableValue(7)
        var added: [Int] = []
        number.addObserver { added.append($0) }
        number.bind(Label()) { _, value in added.append(value) }
        XCTAssertEqual(added, [])
    }

    func testReplayOnAQueueComesBeforeLaterValues() {
        let number = ObservableValue(1)
        let queue = DispatchQueue(label: "replay")
        let seen = ValueTestRecorder<Int>()
        let done = expectation(description: "delivered")
        number.addObserver(queue: queue, replay: true) { value in
            seen.append(value)
            if value == 2 { done.fulfill() }
        }
        number.value = 2
        waitUntilFulfilled([done], timeout: 5)
        XCTAssertEqual(seen.values, [1, 2])
    }

    // MARK: Skipping duplicates

    func testSkipsDuplicatesWhenAskedOnly() {
        let skipping = ObservableValue("a", skipsDuplicates: true)
        let plain = ObservableValue(value: "a", skipsDuplicates: false)
        var skippingSeen: [String] = []
        var plainSeen: [String] = []
        skipping.addObserver { skippingSeen.append($0) }
        plain.addObserver { plainSeen.append($0) }
        for text in ["a", "b", "b", "a"] {
            skipping.value = text
            plain.value = text
        }
        XCTAssertEqual(skippingSeen, ["b", "a"])
        XCTAssertEqual(plainSeen, ["a", "b", "b", "a"])
        XCTAssertEqual(skipping.triggersCount, 2)
        XCTAssertEqual(ObservableValue(value: 1, skipsDuplicates: true).value, 1)
    }

    // MARK: Delivery

    func testQueueDeliveryRunsOnTheQueueInSetOrder() {
        let number = ObservableValue(0)
        let queue = DispatchQueue(label: "observer")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 1)
        let seen = ValueTestRecorder<Int>()
        let onQueue = ValueTestCounter()
        let done = expectation(description: "delivered")
        number.addObserver(queue: queue) { value in
            if DispatchQueue.getSpecific(key: key) == 1 { onQueue.increment() }
            seen.append(value)
            if value == 100 { done.fulfill() }
        }
        for value in 1...100 { number.value = value }
        waitUntilFulfilled([done], timeout: 5)
        XCTAssertEqual(seen.values, Array(1...100))
        XCTAssertEqual(onQueue.value, 100)
    }

    func testBindOnAQueueGetsTheLiveTarget() {
        let number = ObservableValue(0)
        let label = Label()
        let done = expectation(description: "delivered")
        number.bind(label, queue: DispatchQueue(label: "bind")) { label, value in
            label.texts.append("\(value)")
            done.fulfill()
        }
        number.value = 4
        waitUntilFulfilled([done], timeout: 5)
        XCTAssertEqual(label.texts, ["4"])
    }

    func testMainActorDeliveryFromABackgroundSetter() {
        let number = ObservableValue(0)
        let label = Label()
        let added = ValueTestRecorder<Int>()
        let bound = ValueTestRecorder<Int>()
        number.addObserverOnMainActor(replay: true) { value in
            MainActor.assertIsolated()
            added.append(value)
        }
        number.bindOnMainActor(label) { _, value in
            XCTAssertTrue(Thread.isMainThread)
            bound.append(value)
        }
        XCTAssertEqual(added.values, [0], "replayed synchronously on the main thread")
        ValueTestThread { number.value = 1 }.join()
        runMainLoop { added.count == 2 && bound.count == 1 }
        XCTAssertEqual(added.values, [0, 1])
        XCTAssertEqual(bound.values, [1])
        number.value = 2  // main thread: synchronous
        XCTAssertEqual(bound.values, [1, 2])
    }

    // MARK: Reentrancy

    func testHandlerSettingTheSameValueDoesNotDeadlockAndKeepsOrder() {
        let number = ObservableValue(0)
        // The handlers below capture `number` (a cycle through its observer
        // list): remove them at the end so LeakSanitizer sees it freed.
        defer { number.removeAllObservers() }
        var first: [Int] = []
        var second: [Int] = []
        number.addObserver { value in
            first.append(value)
            if value == 1 {
                number.value = 2
                XCTAssertEqual(number.value, 2, "stored at once")
                number <<< 3
            }
        }
        number.addObserver { second.append($0) }
        number.value = 1
        XCTAssertEqual(first, [1, 2, 3])
        XCTAssertEqual(second, [1, 2, 3], "never [1] nested after [2]: order of sets")
        XCTAssertEqual(number.value, 3)
        XCTAssertEqual(number.triggersCount, 3)
    }

    func testHandlerMayBindWithReplayAndRemoveObservers() {
        let number = ObservableValue(0)
        var late: [Int] = []
        var token: Subscription?
        token = number.addObserver { value in
            if value == 1 {
                number.value = 2  // queued behind this round
                number.addObserver(replay: true) { late.append($0) }
                if let token { number.removeObserver(token) }
            }
        }
        number.value = 1
        XCTAssertEqual(late, [1, 2], "replay of the round in progress, then the queued value")
        number.value = 3
        XCTAssertEqual(late, [1, 2, 3])
        XCTAssertEqual(number.observersCount, 1)
    }

    func testReplayHandlerSettingTheValueIsDelivered() {
        let number = ObservableValue(0)
        // The handlers below capture `number` (a cycle through its observer
        // list): remove them at the end so LeakSanitizer sees it freed.
        defer { number.removeAllObservers() }
        var seen: [Int] = []
        number.addObserver { seen.append($0) }
        number.addObserver(replay: true) { value in
            if value == 0 { number.value = 10 }
        }
        XCTAssertEqual(seen, [10])
        XCTAssertEqual(number.value, 10)
    }

    func testReadingTheValueInsideAHandlerSeesTheNewValue() {
        let number = ObservableValue(0)
        // The handlers below capture `number` (a cycle through its observer
        // list): remove them at the end so LeakSanitizer sees it freed.
        defer { number.removeAllObservers() }
        var read: [Int] = []
        number.addObserver { _ in read.append(number.value) }
        number.value = 5
        XCTAssertEqual(read, [5])
    }
}
