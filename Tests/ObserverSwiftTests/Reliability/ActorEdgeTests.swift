import Dispatch
import Foundation
import ObserverSwiftTesting
import XCTest

@testable import ObserverSwift

/// An actor whose handlers can be held inside a delivery, to queue values
/// behind it at a chosen moment.
actor GatedRecorder {
    private(set) var values: [Int] = []
    private(set) var pings = 0
    /// Signalled by `deinit`, when given.
    private let deallocated: DispatchSemaphore?

    init(deallocated: DispatchSemaphore? = nil) {
        self.deallocated = deallocated
    }

    deinit { deallocated?.signal() }

    func record(_ value: Int) { values.append(value) }

    /// Occupies the actor until `release` is signalled; signals `entered` first.
    func occupy(entered: DispatchSemaphore, release: DispatchSemaphore) {
        entered.signal()
        _ = release.wait(timeout: .now() + 10)
    }

    /// How many values had been delivered when this ran.
    func ping() -> Int {
        pings += 1
        return values.count
    }
}

/// Busy-waits, as a handler or a sender that does work would.
private func spin(microseconds: UInt64) {
    let until = DispatchTime.now().uptimeNanoseconds + microseconds * 1_000
    while DispatchTime.now().uptimeNanoseconds < until {}
}

/// Waits without an async context (semaphores may not be waited on from one).
private func waitFor(_ semaphore: DispatchSemaphore, _ message: String) {
    XCTAssertEqual(semaphore.wait(timeout: .now() + 10), .success, message)
}

/// Runs `body` on a task and waits for its result on the calling thread.
private func runAsync<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Locked<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    _ = done.wait(timeout: .now() + 30)
    return result.withLock { $0 }!
}

/// The recorder's values once every actor delivery queued so far has run
/// (`settleDeliveries`: no extra value can still arrive).
private func values(of recorder: GatedRecorder) -> [Int] {
    runAsync {
        try? await settleDeliveries()
        return await recorder.values
    }
}

/// The edges of actor subscriptions (`subscribe(isolatedTo:)` on `Event`
/// and `KeyedEvent`, `bind(isolatedTo:)`): an exact limit at any timing, the
/// lifetime of `store(in: &set)`, and a mailbox that lets the actor's other
/// work interleave with a backlog.
final class ActorEdgeTests: XCTestCase {
    typealias Handler = @Sendable (isolated GatedRecorder, Int) -> Void

    /// One of the three actor forms: `subscribe(recorder, limit, handler)`
    /// (`limit` nil: none; the value binding takes no limit), `send(value)`,
    /// and the source's count of subscriptions.
    struct Form: Sendable {
        let name: String
        let takesLimit: Bool
        let subscribe: @Sendable (GatedRecorder, Int?, @escaping Handler) -> Subscription
        let send: @Sendable (Int) -> Void
        let count: @Sendable () -> Int
    }

    func forms() -> [Form] {
        let event = Event<Int>()
        let keyed = KeyedEvent<String, Int>()
        let value = ObservableValue(0)
        return [
            Form(
                name: "Event", takesLimit: true,
                subscribe: { recorder, limit, handler in
                    event.subscribe(isolatedTo: recorder, limit: limit, handler: handler)
                },
                send: { event.send($0) }, count: { event.subscribersCount }),
            Form(
                name: "KeyedEvent", takesLimit: true,
                subscribe: { recorder, limit, handler in
                    keyed.subscribe(isolatedTo: recorder, key: "k", limit: limit, handler: handler)
                },
                send: { keyed.send($0, forKey: "k") }, count: { keyed.subscribersCount(forKey: "k") }),
            Form(
                name: "ObservableValue", takesLimit: false,
                subscribe: { recorder, limit, handler in
                    precondition(limit == nil)
                    return value.subscribe(isolatedTo: recorder, handler: handler)
                },
                send: { value.value = $0 }, count: { value.subscribersCount }),
        ]
    }

    static let record: Handler = { recorder, value in recorder.record(value) }

    // MARK: 1. limit

    /// Values 1 and 2 queue while the actor is busy; the handler of 1 waits
    /// until 3 (the limit's last claim) has been sent. All three arrive.
    func testLimitDeliversEveryClaimedValueWhenTheLastClaimLandsMidDrain() {
        for form in forms() where form.takesLimit {
            let recorder = GatedRecorder()
            let inHandler = DispatchSemaphore(value: 0)
            let releaseHandler = DispatchSemaphore(value: 0)
            let first = Locked(true)
            let token = form.subscribe(recorder, 3) { recorder, value in
                if first.withLock({ flag in
                    defer { flag = false }
                    return flag
                }) {
                    inHandler.signal()
                    _ = releaseHandler.wait(timeout: .now() + 10)
                }
                recorder.record(value)
            }
            let entered = DispatchSemaphore(value: 0)
            let releaseActor = DispatchSemaphore(value: 0)
            Task { await recorder.occupy(entered: entered, release: releaseActor) }
            waitFor(entered, "the actor is busy")
            form.send(1)
            form.send(2)
            releaseActor.signal()
            waitFor(inHandler, "the handler of 1 runs")
            form.send(3)
            form.send(4)
            releaseHandler.signal()
            XCTAssertEqual(values(of: recorder), [1, 2, 3], form.name)
            XCTAssertFalse(token.isActive)
        }
    }

    /// A plain sender, values ~10 µs apart, a 20 µs handler: exactly the
    /// first `limit` values, in order, in every trial.
    func testLimitIsExactAtAnyTiming() {
        for form in forms() where form.takesLimit {
            for trial in 0..<5 {
                let recorder = GatedRecorder()
                let token = form.subscribe(recorder, 1_000) { recorder, value in
                    spin(microseconds: 20)
                    recorder.record(value)
                }
                let senderFinished = DispatchSemaphore(value: 0)
                let sender = Thread {
                    for value in 1...2_000 {
                        form.send(value)
                        spin(microseconds: 10)
                    }
                    senderFinished.signal()
                }
                sender.start()
                // Every value is sent before settling; the next trial subscribes to the same source too.
                waitFor(senderFinished, "\(form.name), trial \(trial): the sender finished")
                let received = values(of: recorder)
                let firstMissing = zip(1..., received).first { $0 != $1 }?.0
                XCTAssertTrue(
                    received == Array(1...1_000),
                    "\(form.name), trial \(trial): \(received.count) values, first out of place: \(String(describing: firstMissing))"
                )
                XCTAssertFalse(token.isActive)
            }
        }
    }

    // MARK: 2. store(in: &set)

    func testStoreInSetCancelsWhenTheSetReleasesTheToken() {
        for form in forms() {
            let recorder = GatedRecorder()
            var set = Set<Subscription>()
            form.subscribe(recorder, nil, Self.record).store(in: &set)
            form.send(1)
            XCTAssertEqual(values(of: recorder), [1], form.name)
            set.removeAll()
            XCTAssertEqual(form.count(), 0, "\(form.name): releasing the token cancelled the subscription")
            form.send(2)
            XCTAssertEqual(values(of: recorder), [1], form.name)
        }
    }

    func testDroppedTokenKeepsTheSubscription() {
        for form in forms() {
            let recorder = GatedRecorder()
            _ = form.subscribe(recorder, nil, Self.record)
            form.send(1)
            XCTAssertEqual(values(of: recorder), [1], form.name)
            XCTAssertEqual(form.count(), 1, "\(form.name): a dropped token does not cancel")
            form.send(2)
            XCTAssertEqual(values(of: recorder), [1, 2], form.name)
        }
    }

    // MARK: 3. interleaving and the backlog

    /// A 1 ms handler and 300 values queued at once: a call to the actor made
    /// after them is answered long before the backlog has drained.
    func testActorWorkInterleavesWithABacklog() {
        for form in forms() {
            let recorder = GatedRecorder()
            let token = form.subscribe(recorder, nil) { recorder, value in
                usleep(1_000)
                recorder.record(value)
            }
            for value in 1...300 { form.send(value) }
            let deliveredAtPing = runAsync { await recorder.ping() }
            XCTAssertLessThan(
                deliveredAtPing, 150, "\(form.name): the ping waited for \(deliveredAtPing) of 300 deliveries")
            XCTAssertEqual(values(of: recorder), Array(1...300), "then everything, in order")
            XCTAssertEqual(ObserverCore.statistics.queuedActorDeliveries, 0)
            token.cancel()
        }
    }

    func testBacklogIsVisibleWhileTheActorIsBusy() {
        let recorder = GatedRecorder()
        let event = Event<Int>()
        let token = event.subscribe(isolatedTo: recorder) { recorder, value in recorder.record(value) }
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Task { await recorder.occupy(entered: entered, release: release) }
        waitFor(entered, "the actor is busy")
        let before = ObserverCore.statistics.queuedActorDeliveries
        for value in 1...50 { event.send(value) }
        XCTAssertEqual(ObserverCore.statistics.queuedActorDeliveries - before, 50)
        release.signal()
        XCTAssertEqual(values(of: recorder), Array(1...50))
        token.cancel()
    }

    func testBufferingNewestDropsTheOldestAndCountsThem() {
        let recorder = GatedRecorder()
        let event = Event<Int>()
        let token = event.subscribe(isolatedTo: recorder, bufferingPolicy: .bufferingNewest(3)) { recorder, value in
            recorder.record(value)
        }
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Task { await recorder.occupy(entered: entered, release: release) }
        waitFor(entered, "the actor is busy")
        let dropped = ObserverCore.statistics.droppedActorDeliveries
        for value in 1...10 { event.send(value) }
        XCTAssertEqual(ObserverCore.statistics.droppedActorDeliveries - dropped, 7)
        release.signal()
        XCTAssertEqual(values(of: recorder), [8, 9, 10])
        token.cancel()
    }

    func testBufferingOldestDropsTheNewestAndCountsThem() {
        let recorder = GatedRecorder()
        let event = Event<Int>()
        let token = event.subscribe(isolatedTo: recorder, bufferingPolicy: .bufferingOldest(3)) { recorder, value in
            recorder.record(value)
        }
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Task { await recorder.occupy(entered: entered, release: release) }
        waitFor(entered, "the actor is busy")
        let dropped = ObserverCore.statistics.droppedActorDeliveries
        for value in 1...10 { event.send(value) }
        XCTAssertEqual(ObserverCore.statistics.droppedActorDeliveries - dropped, 7)
        release.signal()
        XCTAssertEqual(values(of: recorder), [1, 2, 3])
        token.cancel()
    }

    /// Cancel means cancelled for what is still queued in the mailbox.
    func testCancelDropsWhatIsStillQueued() {
        for form in forms() {
            let recorder = GatedRecorder()
            let token = form.subscribe(recorder, nil, Self.record)
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            Task { await recorder.occupy(entered: entered, release: release) }
            waitFor(entered, "the actor is busy")
            form.send(1)
            form.send(2)
            XCTAssertTrue(token.cancel())
            release.signal()
            XCTAssertEqual(values(of: recorder), [], form.name)
        }
    }
}
