import Dispatch
import Foundation
@_spi(EngineDiagnostics) import ObserverEngine
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// A weak target recording the titles handed to it, from any thread.
final class Screen: Sendable {
    let titles = Received<String>()
}

final class EventTests: XCTestCase {
    // MARK: Weak targets, counts

    func testTargetSubscriptionReceivesTheLiveTarget() {
        let event = Event<String>()
        let screen = Screen()
        event.subscribe(screen) { screen, title in screen.titles.append(title) }
        event.send("Inbox")
        event.send("Drafts")
        XCTAssertEqual(screen.titles.values, ["Inbox", "Drafts"])
        XCTAssertEqual(event.subscribersCount, 1)
        XCTAssertEqual(event.triggersCount, 2)
        event.resetTriggersCount()
        XCTAssertEqual(event.triggersCount, 0)
    }

    func testTriggersCountIsExactAcrossThreadsThreadExitsAndResets() {
        let event = Event<Int>()
        // The first sender becomes the counter's owner, then exits; its epoch
        // record may be recycled by the next threads.
        spawnThread { for value in 0..<100 { event.send(value) } }.wait()
        XCTAssertEqual(event.triggersCount, 100)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for value in 0..<1000 { event.send(value) }
        }
        for _ in 0..<8 { spawnThread { event.send(0) }.wait() }
        XCTAssertEqual(event.triggersCount, 4108)
        event.resetTriggersCount()
        XCTAssertEqual(event.triggersCount, 0)
        event.send(1)
        spawnThread { event.send(2) }.wait()
        XCTAssertEqual(event.triggersCount, 2)
    }

    /// No cache line is written by two senders: with the owner and four
    /// other threads alive at once, each thread's send changes bytes of the
    /// counter's block on lines no other thread's send changes.
    func testEachSendingThreadCountsOnACacheLineOfItsOwn() throws {
        let event = Event<Int>()
        event.send(0)  // this thread owns the counter
        let threads = 4
        let go = (0..<threads).map { _ in DispatchSemaphore(value: 0) }
        let sent = DispatchSemaphore(value: 0)
        let finished = (0..<threads).map { thread in
            spawnThread {
                // Three sends, one per turn, alive throughout: distinct identities.
                for _ in 0..<3 {
                    go[thread].wait()
                    event.send(thread)
                    sent.signal()
                }
            }
        }
        func send(from thread: Int) {
            if thread == threads {
                event.send(0)
            } else {
                go[thread].signal()
                XCTAssertEqual(sent.wait(timeout: .now() + 10), .success, "thread \(thread) did not send")
            }
        }
        // First turn: every thread claims its place (the first moves counting to the block).
        for thread in 0...threads { send(from: thread) }
        let block = try XCTUnwrap(ContendedCounts(word: event.triggers.owner.load(ordering: .acquiring)))
        let bytes = UnsafeRawBufferPointer(start: block.address, count: ContendedCounts.byteCount)
        var linesWritten: [Set<Int>] = []
        for thread in 0...threads {
            let before = Array(bytes)
            send(from: thread)
            let after = Array(bytes)
            linesWritten.append(Set(before.indices.filter { before[$0] != after[$0] }.map { $0 / 64 }))
        }
        for thread in 0...threads {
            XCTAssertFalse(linesWritten[thread].isEmpty, "thread \(thread)'s send wrote nothing in the block")
            for other in 0..<thread {
                XCTAssertTrue(
                    linesWritten[thread].isDisjoint(with: linesWritten[other]),
                    "threads \(other) and \(thread) both write line(s) "
                        + "\(linesWritten[thread].intersection(linesWritten[other]).sorted()) per send")
            }
        }
        for thread in 0..<threads { send(from: thread) }
        for done in finished { XCTAssertEqual(done.wait(timeout: .now() + 10), .success) }
        XCTAssertEqual(event.triggersCount, 3 * (threads + 1))
    }

    /// Many senders at once, more than one table of slots, beside a thread
    /// that subscribes and cancels and one that reads the count: every
    /// delivery arrives, the count read while they run never decreases nor
    /// exceeds the sends, and once they are joined it equals the sends.
    func testTriggersCountStaysExactUnderManySendersAndChurn() {
        let event = Event<Int>()
        let senders = 2 * ContendedCounts.slotCount + 1
        let sends = 20_000
        let received = (0..<senders).map { _ in AtomicCounter() }
        let token = event.subscribe { value in received[value].increment() }
        let stop = HeapAtomicWord<Bool>(false)
        let churn = spawnThread {
            while !stop.load(ordering: .relaxed) { event.subscribe { _ in }.cancel() }
        }
        let reads = HeapAtomicWord<Int>(0)
        let readFailures = HeapAtomicWord<Int>(0)
        let reader = spawnThread {
            var last = 0
            while !stop.load(ordering: .relaxed) {
                let now = event.triggersCount
                if now < last || now > senders * sends { readFailures.wrappingAdd(1, ordering: .relaxed) }
                last = now
                reads.wrappingAdd(1, ordering: .relaxed)
            }
        }
        let start = DispatchSemaphore(value: 0)
        let finished = (0..<senders).map { sender in
            spawnThread {
                start.wait()
                for _ in 0..<sends { event.send(sender) }
            }
        }
        for _ in 0..<senders { start.signal() }
        for done in finished { XCTAssertEqual(done.wait(timeout: .now() + 120), .success, "a sender did not finish") }
        stop.store(true, ordering: .relaxed)
        XCTAssertEqual(churn.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(reader.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(event.triggersCount, senders * sends)
        XCTAssertEqual(received.map(\.value), Array(repeating: sends, count: senders))
        XCTAssertEqual(
            readFailures.load(ordering: .relaxed), 0, "a count read while sending went back or past the sends")
        XCTAssertGreaterThan(reads.load(ordering: .relaxed), 0)
        token.cancel()
    }

    func testTargetIsHeldWeaklyAndItsSlotIsReclaimedAfterDeallocation() throws {
        let event = Event<Int>()
        var screen: Screen? = Screen()
        weak let weakScreen = screen
        let calls = AtomicCounter()
        event.subscribe(screen!) { _, _ in calls.increment() }
        event.send(1)
        screen = nil
        XCTAssertNil(weakScreen, "the event must not keep its target alive")
        event.send(2)
        XCTAssertEqual(calls.value, 1)
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertEqual(event.slots.storedCount, 0, "a dead target's slot is freed")
    }

    func testUnsubscribeTargetRemovesAllItsSubscriptionsOnly() {
        let event = Event<Int>()
        let first = Screen()
        let second = Screen()
        event.subscribe(first) { screen, value in screen.titles.append("a\(value)") }
        event.subscribe(first) { screen, value in screen.titles.append("b\(value)") }
        event.subscribe(second) { screen, value in screen.titles.append("c\(value)") }
        XCTAssertEqual(event.unsubscribe(first), 2)
        XCTAssertEqual(event.unsubscribe(first), 0, "unsubscribing twice is a no-op")
        XCTAssertEqual(event.unsubscribe(Screen()), 0, "a target never subscribed is a no-op")
        event.send(1)
        XCTAssertEqual(first.titles.values, [])
        XCTAssertEqual(second.titles.values, ["c1"])
        XCTAssertEqual(event.unsubscribe(second), 1)
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testUnsubscribeAll() {
        let event = Event<Int>()
        let received = Received<Int>()
        for _ in 0..<5 { _ = event.subscribe { received.append($0) } }
        XCTAssertEqual(event.unsubscribeAll(), 5)
        event.send(1)
        XCTAssertEqual(received.count, 0)
        _ = event.subscribe { received.append($0) }
        XCTAssertEqual(event.unsubscribeAll(), 1)
        XCTAssertEqual(event.unsubscribeAll(), 0)
    }

    // MARK: Closure subscriptions and tokens

    func testClosureSubscriptionAndIdempotentCancel() {
        let event = Event<Int>()
        let total = SharedVariable(0)
        let token = event.subscribe { value in total.update { $0 += value } }
        XCTAssertTrue(token.isActive)
        event.send(2)
        XCTAssertTrue(token.cancel())
        XCTAssertFalse(token.cancel(), "cancelling twice reports false and does nothing")
        XCTAssertFalse(token.isActive)
        event.send(3)
        XCTAssertEqual(total.value, 2)
    }

    func testCancellingAfterTheEventIsGoneIsANoOp() {
        var event: Event<Int>? = Event<Int>()
        let token = event!.subscribe { _ in }
        event = nil
        XCTAssertFalse(token.cancel())
        XCTAssertFalse(token.isActive)
    }

    func testConcurrentCancelFromTwoThreadsRemovesExactlyOnce() {
        for _ in 0..<200 {
            let event = Event<Int>()
            let token = event.subscribe { _ in }
            let successes = HeapAtomicWord<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                if token.cancel() { successes.wrappingAdd(1, ordering: .relaxed) }
            }
            XCTAssertEqual(successes.load(ordering: .relaxed), 1)
            XCTAssertEqual(event.subscribersCount, 0)
        }
    }

    func testSubscriptionBagCancelsWhenReleased() {
        let event = Event<Int>()
        let received = Received<Int>()
        var bag: SubscriptionBag? = SubscriptionBag()
        event.subscribe { received.append($0) }.store(in: bag!)
        event.subscribe { received.append($0 * 10) }.store(in: bag!)
        XCTAssertEqual(bag!.count, 2)
        event.send(1)
        bag = nil
        event.send(2)
        XCTAssertEqual(received.values.sorted(), [1, 10])
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testHandlerCapturesAreReleasedAfterCancelAndReclaim() throws {
        let baseline = LifetimeTracker.alive.load(ordering: .relaxed)
        let event = Event<Int>()
        let token: Subscription = {
            let tracker = LifetimeTracker()
            return event.subscribe { _ in _ = tracker.id }
        }()
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline + 1)
        token.cancel()
        try ObserverCore.reclaimNow()
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline)
    }

    func testInvalidLimitSubscribesNothing() {
        let event = Event<Int>()
        let token = event.subscribe(limit: 0) { _ in XCTFail("never called") }
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel())
        event.send(1)
        XCTAssertEqual(event.subscribersCount, 0)
    }

    // MARK: One-time and N-time

    func testSubscribeOnceDeliversOnce() {
        let event = Event<Int>()
        let received = Received<Int>()
        let token = event.subscribe(limit: 1) { received.append($0) }
        event.send(1)
        event.send(2)
        XCTAssertEqual(received.values, [1])
        XCTAssertFalse(token.isActive, "a spent subscription removes itself")
        XCTAssertEqual(event.slots.storedCount, 0)
    }

    func testLimitIsExactUnderConcurrentSends() {
        for limit in [1, 3, 50] {
            let event = Event<Int>()
            let delivered = HeapAtomicWord<Int>(0)
            let target = Screen()
            _ = event.subscribe(limit: limit) { _ in delivered.wrappingAdd(1, ordering: .relaxed) }
            event.subscribe(target, limit: limit) { _, _ in delivered.wrappingAdd(1, ordering: .relaxed) }
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for value in 0..<500 { event.send(value) }
            }
            XCTAssertEqual(delivered.load(ordering: .relaxed), 2 * limit, "limit \(limit)")
            XCTAssertEqual(event.subscribersCount, 0)
        }
    }

    // MARK: Delivery

    func testQueueDeliveryRunsOnTheQueue() {
        let event = Event<Int>()
        let queue = DispatchQueue(label: "delivery")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let received = Received<Int>()
        let done = expectation(description: "delivered")
        done.expectedFulfillmentCount = 4
        let token = event.subscribe(delivery: .queue(queue)) { value in
            XCTAssertEqual(DispatchQueue.getSpecific(key: key), 7)
            received.append(value)
            done.fulfill()
        }
        let screen = Screen()
        event.subscribe(screen, delivery: .queue(queue)) { screen, value in
            XCTAssertEqual(DispatchQueue.getSpecific(key: key), 7)
            screen.titles.append("\(value)")
            done.fulfill()
        }
        event.send(1)
        event.send(2)
        waitUntilFulfilled([done], timeout: 5)
        XCTAssertEqual(received.values, [1, 2], "queued in send order")
        queue.sync {}
        XCTAssertEqual(screen.titles.values, ["1", "2"])
        token.cancel()
    }

    func testMainActorDeliveryFromABackgroundThread() {
        let event = Event<Int>()
        let received = Received<Int>()
        let token = event.subscribe { @MainActor value in
            MainActor.assertIsolated()
            XCTAssertTrue(Thread.isMainThread)
            received.append(value)
        }
        spawnThread { event.send(42) }.wait()
        let deadline = Date().addingTimeInterval(5)
        while received.count == 0 && Date() < deadline {
            RunLoop.main.run(until: Date().addingTimeInterval(0.01))
        }
        XCTAssertEqual(received.values, [42])
        event.send(43)  // on the main thread: delivered synchronously
        XCTAssertEqual(received.values, [42, 43])
        token.cancel()
    }

    func testMarkedMainActorClosureSelectsTheMainActorOverload() {
        let event = Event<Int>()
        let screen = Screen()
        let received = Received<Int>()
        let token = event.subscribe { @MainActor value in
            MainActor.assertIsolated()
            received.append(value)
        }
        event.subscribe(screen) { @MainActor screen, value in
            MainActor.assertIsolated()
            screen.titles.append("\(value)")
        }
        spawnThread { event.send(7) }.wait()
        let deadline = Date().addingTimeInterval(5)
        while (received.count == 0 || screen.titles.count == 0) && Date() < deadline {
            RunLoop.main.run(until: Date().addingTimeInterval(0.01))
        }
        XCTAssertEqual(received.values, [7])
        XCTAssertEqual(screen.titles.values, ["7"])
        token.cancel()
    }

    // MARK: Reentrancy

    func testHandlerMayCancelItself() {
        let event = Event<Int>()
        let calls = AtomicCounter()
        let token = SharedVariable<Subscription?>(nil)
        token.value = event.subscribe { _ in
            calls.increment()
            token.value?.cancel()
        }
        event.send(1)
        event.send(2)
        XCTAssertEqual(calls.value, 1)
    }

    func testHandlerCancellingALaterSubscriptionStopsItInTheSameSend() {
        let event = Event<Int>()
        let log = Received<String>()
        let second = SharedVariable<Subscription?>(nil)
        let first = event.subscribe { _ in
            log.append("first")
            second.value?.cancel()
        }
        second.value = event.subscribe { _ in log.append("second") }
        event.send(1)
        XCTAssertEqual(log.values, ["first"], "a slot not yet reached is skipped once removed")
        withExtendedLifetime(first) {}
    }

    func testHandlerMayUnsubscribeAll() {
        let event = Event<Int>()
        let calls = AtomicCounter()
        for _ in 0..<4 {
            _ = event.subscribe { _ in
                calls.increment()
                event.unsubscribeAll()
            }
        }
        event.send(1)
        event.send(2)
        XCTAssertEqual(calls.value, 1)
    }

    func testSubscriptionAddedDuringASendIsNotCalledByThatSend() {
        let event = Event<Int>()
        defer { event.unsubscribeAll() }  // the handlers capture the event
        let log = Received<String>()
        let added = SharedVariable(false)
        _ = event.subscribe { value in
            log.append("outer \(value)")
            if !added.value {
                added.value = true
                _ = event.subscribe { value in log.append("inner \(value)") }
            }
        }
        event.send(1)
        event.send(2)
        XCTAssertEqual(log.values, ["outer 1", "outer 2", "inner 2"])
    }

    func testRecursiveSends64Deep() {
        let event = Event<Int>()
        defer { event.unsubscribeAll() }  // the handler captures the event
        let deepest = SharedVariable(0)
        _ = event.subscribe { depth in
            deepest.update { $0 = max($0, depth) }
            if depth < 64 { event.send(depth + 1) }
        }
        event.send(1)
        XCTAssertEqual(deepest.value, 64)
        XCTAssertEqual(event.triggersCount, 64)
        XCTAssertFalse(ObserverCore.isInsideDelivery)
    }

    func testCancelAndWaitInsideAHandlerThrowsInsteadOfHanging() {
        let event = Event<Int>()
        let thrown = SharedVariable<ObserverError?>(nil)
        let token = SharedVariable<Subscription?>(nil)
        token.value = event.subscribe { _ in
            guard let own = token.value else { return }
            do { try own.cancelAndWait() } catch { thrown.value = error as? ObserverError }
        }
        event.send(1)
        XCTAssertEqual(thrown.value, .waitInsideDelivery)
        XCTAssertFalse(token.value!.isActive, "the subscription is cancelled all the same")
    }

    // MARK: Send semantics across threads

    func testCancelAndWaitWaitsForAnInFlightDelivery() throws {
        let event = Event<Int>()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = HeapAtomicWord<Bool>(false)
        let token = event.subscribe { _ in
            entered.signal()
            release.wait()
            finished.store(true, ordering: .sequentiallyConsistent)
        }
        let sender = spawnThread { event.send(1) }
        entered.wait()
        let waiterReturned = HeapAtomicWord<Bool>(false)
        let returned = DispatchSemaphore(value: 0)
        let waiter = spawnThread {
            try? token.cancelAndWait()
            XCTAssertTrue(finished.load(ordering: .sequentiallyConsistent), "returned before the delivery ended")
            waiterReturned.store(true, ordering: .sequentiallyConsistent)
            returned.signal()
        }
        XCTAssertEqual(returned.wait(timeout: .now() + 0.1), .timedOut, "cancelAndWait returned within 0.1 s")
        XCTAssertFalse(waiterReturned.load(ordering: .sequentiallyConsistent))
        release.signal()
        sender.wait()
        waiter.wait()
        XCTAssertTrue(waiterReturned.load(ordering: .sequentiallyConsistent))
    }

    func testObserverAddedWhileASendIsInProgressIsNotCalledByIt() {
        let event = Event<Int>()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let late = Received<Int>()
        let parked = event.subscribe { value in
            if value == 1 {
                entered.signal()
                release.wait()
            }
        }
        let sender = spawnThread { event.send(1) }
        entered.wait()
        // Added on another thread while send(1) is parked in the first slot;
        // it lands in a later slot, which that send has not reached yet.
        let lateToken = event.subscribe { late.append($0) }
        release.signal()
        sender.wait()
        event.send(2)
        XCTAssertEqual(late.values, [2])
        withExtendedLifetime((parked, lateToken)) {}
    }

    func testRemovedCapturesAreNotReleasedWhileASenderMayStillSeeThem() throws {
        let baseline = LifetimeTracker.alive.load(ordering: .relaxed)
        let event = Event<Int>()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let parked = event.subscribe { value in
            if value == 1 {
                entered.signal()
                release.wait()
            }
        }
        let token: Subscription = {
            let tracker = LifetimeTracker()
            return event.subscribe { _ in _ = tracker.id }
        }()
        let sender = spawnThread { event.send(1) }
        entered.wait()
        token.cancel()
        for _ in 0..<10 { _ = event.subscribe { _ in }.cancel() }  // writers poll reclamation
        XCTAssertEqual(
            LifetimeTracker.alive.load(ordering: .relaxed), baseline + 1,
            "released while a send that may call it is still running")
        XCTAssertGreaterThan(ObserverCore.statistics.pendingObjects, 0)
        release.signal()
        sender.wait()
        try ObserverCore.reclaimNow()
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline)
        withExtendedLifetime(parked) {}
    }

    func testSendsAloneReclaimWhatQuietWritersLeftBehind() throws {
        let baseline = LifetimeTracker.alive.load(ordering: .relaxed)
        let event = Event<Int>()
        _ = event.subscribe { _ in }  // ended by the unsubscribeAll below
        try ObserverCore.reclaimNow()
        // Ten cancellations: below the writers' poll threshold, so only
        // senders will reclaim them.
        for _ in 0..<10 {
            let tracker = LifetimeTracker()
            event.subscribe { _ in _ = tracker.id }.cancel()
        }
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline + 10)
        for value in 0..<50_000 { event.send(value) }
        XCTAssertEqual(
            LifetimeTracker.alive.load(ordering: .relaxed), baseline,
            "senders poll reclamation when writers are quiet")
        event.unsubscribeAll()
    }

    func testTwoSendersAndAChurnThreadDeliverExactlyToStableObservers() {
        let event = Event<Int>()
        let stableCount = 16
        let sendsPerSender = 20_000
        let counters = (0..<stableCount).map { _ in AtomicCounter() }
        let stableTokens = counters.map { counter in event.subscribe { _ in counter.increment() } }
        let stop = HeapAtomicWord<Bool>(false)
        let churn = spawnThread {
            var tokens: [Subscription] = []
            let target = Screen()
            while !stop.load(ordering: .relaxed) {
                tokens.append(event.subscribe { _ in })
                event.subscribe(target) { _, _ in }
                if tokens.count > 32 {
                    tokens.prefix(16).forEach { $0.cancel() }
                    tokens.removeFirst(16)
                    event.unsubscribe(target)
                }
            }
            tokens.forEach { $0.cancel() }
        }
        let senders = (0..<2).map { _ in
            spawnThread { for value in 0..<sendsPerSender { event.send(value) } }
        }
        senders.forEach { $0.wait() }
        stop.store(true, ordering: .relaxed)
        churn.wait()
        for counter in counters {
            XCTAssertEqual(counter.value, 2 * sendsPerSender)
        }
        XCTAssertEqual(event.triggersCount, 2 * sendsPerSender)
        withExtendedLifetime(stableTokens) {}
    }
}
