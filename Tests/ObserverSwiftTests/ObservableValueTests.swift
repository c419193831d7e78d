import Dispatch
import Foundation
import ObserverSwift
import XCTest

/// A binding target recording the texts handed to it, from any thread.
private final class Label: Sendable {
    let texts = ValueTestRecorder<String>()
}

final class ObservableValueTests: XCTestCase {
    // MARK: Creating, reading, setting

    func testBothInitializersStoreTheValue() {
        XCTAssertEqual(ObservableValue(3).value, 3)
        XCTAssertEqual(ObservableValue(value: "a").value, "a")
    }

    func testSettingNotifiesWithTheNewValue() {
        let number = ObservableValue(0)
        let seen = ValueTestRecorder<Int>()
        let observer = number.addObserver { seen.append($0) }
        number.value = 1
        number.value = 2
        XCTAssertEqual(seen.values, [1, 2])
        XCTAssertEqual(number.value, 2)
        withExtendedLifetime(observer) {}
    }

    func testOperatorSetsTheValueAndNotifies() {
        let number = ObservableValue(0)
        let seen = ValueTestRecorder<Int>()
        let observer = number.addObserver { seen.append($0) }
        number <<< 5
        number <<< number.value + 1  // assignment precedence: no parentheses needed
        XCTAssertEqual(number.value, 6)
        XCTAssertEqual(seen.values, [5, 6])
        withExtendedLifetime(observer) {}
    }

    // MARK: Binding targets

    func testBindPassesTheLiveTargetAndTheValue() {
        let title = ObservableValue("")
        let label = Label()
        title.bind(label) { label, text in label.texts.append(text) }
        title.value = "Inbox"
        XCTAssertEqual(label.texts.values, ["Inbox"])
        XCTAssertEqual(title.observersCount, 1)
    }

    func testBindHoldsTheTargetWeaklyAndForgetsItWhenItDies() {
        let title = ObservableValue("")
        let calls = ValueTestCounter()
        var label: Label? = Label()
        weak let weakLabel = label
        title.bind(label!) { _, _ in calls.increment() }
        label = nil
        XCTAssertNil(weakLabel, "bind must not retain the target")
        title.value = "x"
        XCTAssertEqual(calls.value, 0)
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
        XCTAssertEqual(first.texts.values, [])
        XCTAssertEqual(second.texts.values, ["a"])
    }

    func testUnbindAllRemovesBindingsButKeepsAddedObservers() {
        let number = ObservableValue(0)
        let label = Label()
        let added = ValueTestRecorder<Int>()
        number.bind(label) { label, value in label.texts.append("\(value)") }
        let observer = number.addObserver { added.append($0) }
        XCTAssertEqual(number.unbindAll(), 1)
        number.value = 1
        XCTAssertEqual(label.texts.values, [])
        XCTAssertEqual(added.values, [1])
        XCTAssertEqual(number.observersCount, 1)
        withExtendedLifetime(observer) {}
    }

    func testBindTokenCancelsThatBindingAlone() {
        let number = ObservableValue(0)
        let label = Label()
        let token = number.bind(label) { label, value in label.texts.append("a\(value)") }
        number.bind(label) { label, value in label.texts.append("b\(value)") }
        token.cancel()
        number.value = 1
        XCTAssertEqual(label.texts.values, ["b1"])
    }

    // MARK: Closure observers (minimal recipe)

    func testRemoveObserverWithTokenStopsOnlyThatObserver() {
        let number = ObservableValue(value: 0)
        let first = ValueTestRecorder<Int>()
        let second = ValueTestRecorder<Int>()
        let token = number.addObserver { first.append($0) }
        let kept = number.addObserver { second.append($0) }
        XCTAssertTrue(number.removeObserver(token))
        XCTAssertFalse(number.removeObserver(token), "a second removal is a no-op")
        number.value = 1
        XCTAssertEqual(first.values, [])
        XCTAssertEqual(second.values, [1])
        withExtendedLifetime(kept) {}
    }

    func testRemoveObserverIgnoresAForeignToken() {
        let number = ObservableValue(value: 0)
        let other = ObservableValue(value: 0)
        let otherSeen = ValueTestRecorder<Int>()
        let foreign = other.addObserver { otherSeen.append($0) }
        XCTAssertFalse(number.removeObserver(foreign))
        other.value = 1
        XCTAssertEqual(otherSeen.values, [1], "the foreign observer must survive")
        XCTAssertTrue(foreign.isActive)
    }

    func testRemoveObserverWithoutArgumentRemovesAddedObserversButNotBindings() {
        let number = ObservableValue(value: 0)
        let label = Label()
        let added = ValueTestCounter()
        _ = number.addObserver { _ in added.increment() }  // both removed by removeObserver()
        _ = number.addObserver { _ in added.increment() }
        number.bind(label) { label, value in label.texts.append("\(value)") }
        XCTAssertEqual(number.removeObserver(), 2)
        number.value = 1
        XCTAssertEqual(added.value, 0)
        XCTAssertEqual(label.texts.values, ["1"])
        XCTAssertEqual(number.removeObserver(), 0)
    }

    func testRemoveAllObserversRemovesBoth() {
        let number = ObservableValue(value: 0)
        let label = Label()
        _ = number.addObserver { _ in }  // removed by removeAllObservers()
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
        let added = ValueTestRecorder<Int>()
        number.bind(label, replay: true) { label, value in label.texts.append("\(value)") }
        let observer = number.addObserver(replay: true) { added.append($0) }
        XCTAssertEqual(label.texts.values, ["7"])
        XCTAssertEqual(added.values, [7])
        number.value = 8
        XCTAssertEqual(label.texts.values, ["7", "8"])
        XCTAssertEqual(added.values, [7, 8])
        XCTAssertEqual(number.triggersCount, 1, "a replay is not a trigger")
        withExtendedLifetime(observer) {}
    }

    func testNoReplayByDefault() {
        let number = ObservableValue(7)
        let added = ValueTestRecorder<Int>()
        let observer = number.addObserver { added.append($0) }
        number.bind(Label()) { _, value in added.append(value) }
        XCTAssertEqual(added.values, [])
        withExtendedLifetime(observer) {}
    }

    func testReplayOnAQueueComesBeforeLaterValues() {
        let number = ObservableValue(1)
        let queue = DispatchQueue(label: "replay")
        let seen = ValueTestRecorder<Int>()
        let done = expectation(description: "delivered")
        let observer = number.addObserver(queue: queue, replay: true) { value in
            seen.append(value)
            if value == 2 { done.fulfill() }
        }
        number.value = 2
        waitUntilFulfilled([done], timeout: 5)
        XCTAssertEqual(seen.values, [1, 2])
        observer.cancel()
    }

    // MARK: Skipping duplicates

    func testSkipsDuplicatesWhenAskedOnly() {
        let skipping = ObservableValue("a", skipsDuplicates: true)
        let plain = ObservableValue(value: "a", skipsDuplicates: false)
        let skippingSeen = ValueTestRecorder<String>()
        let plainSeen = ValueTestRecorder<String>()
        let skippingObserver = skipping.addObserver { skippingSeen.append($0) }
        let plainObserver = plain.addObserver { plainSeen.append($0) }
        for text in ["a", "b", "b", "a"] {
            skipping.value = text
            plain.value = text
        }
        XCTAssertEqual(skippingSeen.values, ["b", "a"])
        XCTAssertEqual(plainSeen.values, ["a", "b", "b", "a"])
        withExtendedLifetime((skippingObserver, plainObserver)) {}
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
        let observer = number.addObserver(queue: queue) { value in
            if DispatchQueue.getSpecific(key: key) == 1 { onQueue.increment() }
            seen.append(value)
            if value == 100 { done.fulfill() }
        }
        for value in 1...100 { number.value = value }
        waitUntilFulfilled([done], timeout: 5)
        XCTAssertEqual(seen.values, Array(1...100))
        XCTAssertEqual(onQueue.value, 100)
        observer.cancel()
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
        XCTAssertEqual(label.texts.values, ["4"])
    }

    func testMainActorDeliveryFromABackgroundSetter() {
        let number = ObservableValue(0)
        let label = Label()
        let added = ValueTestRecorder<Int>()
        let bound = ValueTestRecorder<Int>()
        let observer = number.addObserverOnMainActor(replay: true) { value in
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
        observer.cancel()
    }

    // MARK: Reentrancy

    func testHandlerSettingTheSameValueDoesNotDeadlockAndKeepsOrder() {
        let number = ObservableValue(0)
        // The handlers below capture `number` (a cycle through its observer
        // list): remove them at the end so LeakSanitizer sees it freed.
        defer { number.removeAllObservers() }
        let first = ValueTestRecorder<Int>()
        let second = ValueTestRecorder<Int>()
        _ = number.addObserver { value in  // removed by the deferred removeAllObservers()
            first.append(value)
            if value == 1 {
                number.value = 2
                XCTAssertEqual(number.value, 2, "stored at once")
                number <<< 3
            }
        }
        _ = number.addObserver { second.append($0) }
        number.value = 1
        XCTAssertEqual(first.values, [1, 2, 3])
        XCTAssertEqual(second.values, [1, 2, 3], "never [1] nested after [2]: order of sets")
        XCTAssertEqual(number.value, 3)
        XCTAssertEqual(number.triggersCount, 3)
    }

    func testHandlerMayBindWithReplayAndRemoveObservers() {
        let number = ObservableValue(0)
        let late = ValueTestRecorder<Int>()
        let token = SharedVariable<Subscription?>(nil)
        let lateToken = SharedVariable<Subscription?>(nil)
        token.value = number.addObserver { value in
            if value == 1 {
                number.value = 2  // queued behind this round
                lateToken.value = number.addObserver(replay: true) { late.append($0) }
                if let own = token.value { number.removeObserver(own) }
            }
        }
        number.value = 1
        XCTAssertEqual(late.values, [1, 2], "replay of the round in progress, then the queued value")
        number.value = 3
        XCTAssertEqual(late.values, [1, 2, 3])
        XCTAssertEqual(number.observersCount, 1)
        XCTAssertEqual(lateToken.value?.isActive, true)
    }

    func testReplayHandlerSettingTheValueIsDelivered() {
        let number = ObservableValue(0)
        // The handlers below capture `number` (a cycle through its observer
        // list): remove them at the end so LeakSanitizer sees it freed.
        defer { number.removeAllObservers() }
        let seen = ValueTestRecorder<Int>()
        _ = number.addObserver { seen.append($0) }  // both removed by the deferred removeAllObservers()
        _ = number.addObserver(replay: true) { value in
            if value == 0 { number.value = 10 }
        }
        XCTAssertEqual(seen.values, [10])
        XCTAssertEqual(number.value, 10)
    }

    func testReadingTheValueInsideAHandlerSeesTheNewValue() {
        let number = ObservableValue(0)
        // The handlers below capture `number` (a cycle through its observer
        // list): remove them at the end so LeakSanitizer sees it freed.
        defer { number.removeAllObservers() }
        let read = ValueTestRecorder<Int>()
        _ = number.addObserver { _ in read.append(number.value) }  // removed by the deferred removeAllObservers()
        number.value = 5
        XCTAssertEqual(read.values, [5])
    }
}
