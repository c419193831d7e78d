import Dispatch
import Foundation
@_spi(EngineDiagnostics) import ObserverEngine
@_spi(EngineDiagnostics) import ObserverSwift

/// Returns once every delivery queued so far has run, and what was
/// cancelled has been released, so that a test can assert at once instead
/// of sleeping.
///
/// ```swift
/// let saved = Event<Int>()
/// let recorder = Recorder<Int>("logged")
/// let token = saved.subscribe(delivery: .queue(DispatchQueue(label: "log"))) { recorder.record($0) }
/// saved.send(1)
/// try await settleDeliveries()
/// assert(recorder.values == [1])   // the queued delivery has run
/// token.cancel()
/// ```
///
/// What it waits for, in rounds until a round finds nothing more to run
/// (a delivery may send again, and queue more):
/// - the main actor, when a main-actor delivery is queued or a tracked one
///   is running: every main-actor delivery enqueued before the round (a
///   test that blocks the main thread settles everything else);
/// - each dispatch queue an active tracked subscription delivers on
///   (tracking is on once this product is used: subscriptions made before
///   that are not known, and neither is their queue), with a barrier, so a
///   concurrent queue's earlier deliveries have ended too (a global queue
///   takes no barrier: its deliveries may still be running);
/// - every actor subscription (`subscribe(isolatedTo:)`, tracked or not):
///   the values waiting in its mailbox and the delivery running on its actor;
/// - every tracked handler running when a round starts, wherever it runs:
///   the round repeats until it has returned, since what it sends on (to
///   the main actor, a queue, an actor) may come after the round looked;
/// - then one grace period: every send running on any thread has ended, and
///   every handler cancelled so far has been released, with its captures
///   (`ObserverCore.reclaimNow()`).
///
/// Call it from a test, not from inside a handler.
///
/// - Parameter timeout: how long all of it may take. A handler that never
///   returns makes it throw, not hang.
/// - Throws: ``ObserverTestFailure`` when `timeout` passes first, naming
///   what it was waiting for and the tracked handlers still running.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public func settleDeliveries(timeout: Duration = .seconds(5)) async throws {
    ObserverCore.isTrackingSubscriptions = true
    let deadline = Deadline(after: timeout)
    while true {
        let before = progress()
        let records = SubscriptionTracking.records
        let mainActorRunning = records.contains { record in
            record.delivery.isOnMainActor && record.running > 0
        }
        if SubscriptionTracking.queuedMainActorDeliveries > 0 || mainActorRunning {
            let mainActor: @Sendable () -> ObserverTestFailure = {
                stillPending("the main actor's queued deliveries", timeout)
            }
            try await wait(until: deadline, orFail: mainActor, start: { done in DispatchQueue.main.async { done() } })
        }
        // The queues that active subscriptions (and handlers still running)
        // deliver on; a cancelled subscription's queued deliveries are dropped.
        var queues: [ObjectIdentifier: (queue: DispatchQueue, user: TrackedSubscription)] = [:]
        for record in records where record.running > 0 || record.isActive {
            if let queue = record.delivery.queue { queues[ObjectIdentifier(queue)] = (queue, record) }
        }
        for (queue, user) in queues.values {
            let what = "queue \"\(queue.label)\" (used by \(user.snapshot))"
            try await wait(
                until: deadline, orFail: { stillPending(what, timeout) },
                start: { done in queue.async(flags: .barrier) { done() } })
        }
        try await waitForActorMailboxes(until: deadline, timeout)
        let after = progress()
        if after == before && after.isQuiet { break }
        if deadline.hasPassed {
            throw stillPending(
                after.running > 0 ? "sends still running a handler" : "deliveries that keep sending more", timeout)
        }
        // Only a handler still running (it may send more when it returns):
        // check again shortly rather than spin.
        if after == before {
            await Task.yield()
            try await Task.sleep(nanoseconds: 100_000)
        }
    }
    let sends: @Sendable () -> ObserverTestFailure = { stillPending("sends still running a handler", timeout) }
    try await wait(
        until: deadline, orFail: sends,
        start: { done in
            let thread = Thread {
                // Called from a thread of its own, never inside a send: it
                // cannot throw `waitInsideDelivery`.
                try? ObserverCore.reclaimNow()
                done()
            }
            thread.start()
        })
}

/// Waits until no actor mailbox has a drain job (tracked subscription or
/// not): nothing waits for an actor and no actor delivery is running. The
/// jobs run on actors this call cannot name, so it checks their count
/// between short pauses.
private func waitForActorMailboxes(until deadline: Deadline, _ timeout: Duration) async throws {
    while ActorMailboxCounters.jobs.load(ordering: .acquiring) > 0 {
        if deadline.hasPassed { throw stillPending("actor deliveries", timeout) }
        await Task.yield()
        try await Task.sleep(nanoseconds: 100_000)
    }
}

/// What a round of ``settleDeliveries(timeout:)`` compares: unchanged over
/// a round, and quiet at its end, means nothing ran in it and nothing is
/// left that could run. A handler counts when it starts, so one that was
/// already running when the round began shows only in `running`: it may
/// still send (to the main actor, a queue) after the round looked there.
private struct Progress: Equatable {
    /// Tracked deliveries started so far.
    var started = 0
    /// Tracked handlers running now.
    var running = 0
    /// Main-actor deliveries enqueued that have not started.
    var mainActorQueued = 0
    /// Values waiting in actor mailboxes.
    var actorQueued = 0

    /// Nothing running and nothing waiting to run.
    var isQuiet: Bool { running == 0 && mainActorQueued == 0 && actorQueued == 0 }
}

private func progress() -> Progress {
    var progress = Progress()
    for record in SubscriptionTracking.records {
        progress.started &+= record.deliveries
        progress.running &+= record.running
    }
    progress.mainActorQueued = SubscriptionTracking.queuedMainActorDeliveries
    progress.actorQueued = ObserverCore.statistics.queuedActorDeliveries
    return progress
}

/// The failure of a settle that timed out waiting for `what`.
private func stillPending(_ what: String, _ timeout: Duration) -> ObserverTestFailure {
    var text = "settleDeliveries timed out after \(timeout.text) waiting for \(what)"
    let running = SubscriptionTracking.records.filter { $0.running > 0 }
    if !running.isEmpty {
        text += "; handlers still running: " + running.map { "\($0.snapshot)" }.joined(separator: "; ")
    }
    let queued = ObserverCore.statistics.queuedActorDeliveries
    if queued > 0 { text += "; \(queued) value\(queued == 1 ? "" : "s") waiting for actors" }
    return ObserverTestFailure(text)
}
