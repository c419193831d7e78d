import Dispatch
import Foundation
import ObserverSwift
import ObserverTestSupport
import XCTest

/// A binding target recording the texts handed to it, from any thread.
private final class Label: Sendable {
    let texts = Received<String>()
}

final class ObservableValueTests: XCTestCase {
    // MARK: Creating, reading, setting

    func testBothInitializersStoreTheValue() {
        XCTAssertEqual(ObservableValue(3).value, 3)
    }

    func testSettingNotifiesWithTheNewValue() {
        let number = ObservableValue(0)
        let seen = Received<Int>()
        let observer = number.subscribe { seen.append($0) }
        number.value = 1
        number.value = 2
        XCTAssertEqual(seen.values, [1, 2])
        XCTAssertEqual(number.value, 2)
        withExtendedLifetime(observer) {}
    }

    func testOperatorSetsTheValueAndNotifies() {
        let number = ObservableValue(0)
        let seen = Received<Int>()
        let observer = number.subscribe { seen.append($0) }
        number.value = 5
        number.value = number.value + 1  // assignment precedence: no parentheses needed
        XCTAssertEqual(number.value, 6)
        XCTAssertEqual(seen.values, [5, 6])
        withExtendedLifetime(observer) {}
    }

    // MARK: Binding targets

    func testBindPassesTheLiveTargetAndTheValue() {
        let title = ObservableValue("")
        let label = Label()
        title.subscribe(label) { label, text in label.texts.append(text) }
        title.value = "Inbox"
        XCTAssertEqual(label.texts.values, ["Inbox"])
        XCTAssertEqual(title.subscribersCount, 1)
    }

    func testBindHoldsTheTargetWeaklyAndForgetsItWhenItDies() {
        let title = ObservableValue("")
        let calls = LockedCounter()
        var label: Label? = Label()
        weak let weakLabel = label
        title.subscribe(label!) { _, _ in calls.increment() }
        label = nil
        XCTAssertNil(weakLabel, "bind must not retain the target")
        title.value = "x"
        XCTAssertEqual(calls.value, 0)
        XCTAssertEqual(title.subscribersCount, 0)
    }

    func testUnbindRemovesOnlyThatTargetAndUnknownTargetIsANoOp() {
        let title = ObservableValue("")
        let first = Label()
        let second = Label()
        title.subscribe(first) { label, text in label.texts.append(text) }
        title.subscribe(first) { label, text in label.texts.append(text + "!") }
        title.subscribe(second) { label, text in label.texts.append(text) }
        XCTAssertEqual(title.unsubscribe(first), 2)
        XCTAssertEqual(title.unsubscribe(first), 0)
        XCTAssertEqual(title.unsubscribe(Label()), 0)
        title.value = "a"
        XCTAssertEqual(first.texts.values, [])
        XCTAssertEqual(second.texts.values, ["a"])
    }

    func testBindTokenCancelsThatBindingAlone() {
        let number = ObservableValue(0)
        let label = Label()
        let token = number.subscribe(label) { label, value in label.texts.append("a\(value)") }
        number.subscribe(label) { label, value in label.texts.append("b\(value)") }
        token.cancel()
        number.value = 1
        XCTAssertEqual(label.texts.values, ["b1"])
    }

    // MARK: Closure subscriptions

    func testCancellingATokenStopsOnlyThatSubscription() {
        let number = ObservableValue(0)
        let first = Received<Int>()
        let second = Received<Int>()
        let token = number.subscribe { first.append($0) }
        let kept = number.subscribe { second.append($0) }
        XCTAssertTrue(token.cancel())
        XCTAssertFalse(token.cancel(), "a second removal is a no-op")
        number.value = 1
        XCTAssertEqual(first.values, [])
        XCTAssertEqual(second.values, [1])
        withExtendedLifetime(kept) {}
    }

    func testUnsubscribeAllRemovesBoth() {
        let number = ObservableValue(0)
        let label = Label()
        _ = number.subscribe { _ in }  // removed by unsubscribeAll()
        number.subscribe(label) { _, _ in }
        XCTAssertEqual(number.unsubscribeAll(), 2)
        XCTAssertEqual(number.subscribersCount, 0)
    }

    // MARK: Counting

    func testObserversCountAndTriggersCount() {
        let number = ObservableValue(0)
        XCTAssertEqual(number.subscribersCount, 0)
        XCTAssertEqual(number.triggersCount, 0)
        let token = number.subscribe { _ in }
        number.subscribe(Label()) { _, _ in }  // target dies at once
        XCTAssertEqual(number.subscribersCount, 1)
        number.value = 1
        number.value = 2
        XCTAssertEqual(number.triggersCount, 2)
        token.cancel()
        XCTAssertEqual(number.subscribersCount, 0)
        number.value = 3
        XCTAssertEqual(number.triggersCount, 3, "a set with no observers still triggers")
        number.resetTriggersCount()
        XCTAssertEqual(number.triggersCount, 0)
    }

    // MARK: Replay

    func testReplayDeliversTheCurrentValueThenLaterOnes() {
        let number = ObservableValue(7)
        let label = Label()
        let added = Received<Int>()
        number.replaying.subscribe(label) { label, value in label.texts.append("\(value)") }
        let observer = number.replaying.subscribe { added.append($0) }
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
        let added = Received<Int>()
        let observer = number.subscribe { added.append($0) }
        number.subscribe(Label()) { _, value in added.append(value) }
        XCTAssertEqual(added.values, [])
        withExtendedLifetime(observer) {}
    }

    func testReplayOnAQueueComesBeforeLaterValues() {
        let number = ObservableValue(1)
        let queue = DispatchQueue(label: "replay")
        let seen = Received<Int>()
        let done = expectation(description: "delivered")
        let observer = number.replaying.subscribe(delivery: .queue(queue)) { value in
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
        let plain = ObservableValue("a", skipsDuplicates: false)
        let skippingSeen = Received<String>()
        let plainSeen = Received<String>()
        let skippingObserver = skipping.subscribe { skippingSeen.append($0) }
        let plainObserver = plain.subscribe { plainSeen.append($0) }
        for text in ["a", "b", "b", "a"] {
            skipping.value = text
            plain.value = text
        }
        XCTAssertEqual(skippingSeen.values, ["b", "a"])
        XCTAssertEqual(plainSeen.values, ["a", "b", "b", "a"])
        withExtendedLifetime((skippingObserver, plainObserver)) {}
        XCTAssertEqual(skipping.triggersCount, 2)
        XCTAssertEqual(ObservableValue(1, skipsDuplicates: true).value, 1)
    }

    // MARK: Delivery

    func testQueueDeliveryRunsOnTheQueueInSetOrder() {
        let number = ObservableValue(0)
        let queue = DispatchQueue(label: "observer")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 1)
        let seen = Received<Int>()
        let onQueue = LockedCounter()
        let done = expectation(description: "delivered")
        let observer = number.subscribe(delivery: .queue(queue)) { value in
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
        number.subscribe(label, delivery: .queue(DispatchQueue(label: "bind"))) { label, value in
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
        let added = Received<Int>()
        let bound = Received<Int>()
        let observer = number.replaying.subscribe { @MainActor value in
            MainActor.assertIsolated()
            added.append(value)
        }
        number.subscribe(label) { @MainActor _, value in
            XCTAssertTrue(Thread.isMainThread)
            bound.append(value)
        }
        XCTAssertEqual(added.values, [0], "replayed synchronously on the main thread")
        JoinableThread { number.value = 1 }.join()
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
        defer { number.unsubscribeAll() }
        let first = Received<Int>()
        let second = Received<Int>()
        _ = number.subscribe { value in  // removed by the deferred removeAllObservers()
            first.append(value)
            if value == 1 {
                number.value = 2
                XCTAssertEqual(number.value, 2, "stored at once")
                number.value = 3
            }
        }
        _ = number.subscribe { second.append($0) }
        number.value = 1
        XCTAssertEqual(first.values, [1, 2, 3])
        XCTAssertEqual(second.values, [1, 2, 3], "never [1] nested after [2]: order of sets")
        XCTAssertEqual(number.value, 3)
        XCTAssertEqual(number.triggersCount, 3)
    }

    func testHandlerMayBindWithReplayAndRemoveObservers() {
        let number = ObservableValue(0)
        let late = Received<Int>()
        let token = SharedVariable<Subscription?>(nil)
        let lateToken = SharedVariable<Subscription?>(nil)
        token.value = number.subscribe { value in
            if value == 1 {
                number.value = 2  // queued behind this round
                lateToken.value = number.replaying.subscribe { late.append($0) }
                if let own = token.value { own.cancel() }
            }
        }
        number.value = 1
        XCTAssertEqual(late.values, [1, 2], "replay of the round in progress, then the queued value")
        number.value = 3
        XCTAssertEqual(late.values, [1, 2, 3])
        XCTAssertEqual(number.subscribersCount, 1)
        XCTAssertEqual(lateToken.value?.isActive, true)
    }

    func testReplayHandlerSettingTheValueIsDelivered() {
        let number = ObservableValue(0)
        // The handlers below capture `number` (a cycle through its observer
        // list): remove them at the end so LeakSanitizer sees it freed.
        defer { number.unsubscribeAll() }
        let seen = Received<Int>()
        _ = number.subscribe { seen.append($0) }  // both removed by the deferred removeAllObservers()
        _ = number.replaying.subscribe { value in
            if value == 0 { number.value = 10 }
        }
        XCTAssertEqual(seen.values, [10])
        XCTAssertEqual(number.value, 10)
    }

    func testReadingTheValueInsideAHandlerSeesTheNewValue() {
        let number = ObservableValue(0)
        // The handlers below capture `number` (a cycle through its observer
        // list): remove them at the end so LeakSanitizer sees it freed.
        defer { number.unsubscribeAll() }
        let read = Received<Int>()
        _ = number.subscribe { _ in read.append(number.value) }  // removed by the deferred removeAllObservers()
        number.value = 5
        XCTAssertEqual(read.values, [5])
    }
}
