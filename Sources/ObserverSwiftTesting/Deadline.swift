import Dispatch
import ObserverEngine
import ObserverSwift

/// A point in time a wait must not pass.
struct Deadline: Sendable {
    let time: DispatchTime
    let timeout: Duration

    init(after timeout: Duration) {
        self.timeout = timeout
        time = DispatchTime.now() + .nanoseconds(timeout.nanoseconds)
    }

    var hasPassed: Bool { DispatchTime.now() >= time }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating; negative is 0).
    var nanoseconds: Int {
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow || whole > Int64(Int.max) { return Int.max }
        return Int(whole) + Int(attoseconds / 1_000_000_000)
    }

    /// As a reader writes it: `1 s`, `0.25 s`.
    var text: String {
        let (seconds, attoseconds) = components
        if attoseconds == 0 { return "\(seconds) s" }
        return "\(Double(seconds) + Double(attoseconds) / 1e18) s"
    }
}

/// Runs `start`, which calls `done` (once, from anywhere) when what it
/// waits for has happened, and returns then; throws `failure()` if
/// `deadline` passes first. The work `start` began is not stopped: a late
/// `done` is ignored.
///
/// The deadline is a timer that whichever outcome comes first cancels, and
/// `failure` (with what it captures, such as a recorder) is released then:
/// a wait that ended leaves nothing pending until its deadline.
func wait(
    until deadline: Deadline, orFail failure: @escaping @Sendable () -> ObserverTestFailure,
    start: (_ done: @escaping @Sendable () -> Void) -> Void
) async throws {
    let once = OneShot()
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.setEventHandler { once.fail() }
        timer.schedule(deadline: deadline.time)
        once.set(OneShot.Pending(continuation: continuation, failure: failure, timer: timer))
        timer.resume()
        start { once.succeed() }
    }
}

/// A continuation resumed by whichever comes first: `succeed()` or the
/// deadline's timer. The first ends the wait, cancels the timer and drops
/// the failure; the second finds nothing to do.
private final class OneShot: Sendable {
    struct Pending: @unchecked Sendable {
        // @unchecked: `timer` is a DispatchSource, whose methods are thread-safe.
        let continuation: CheckedContinuation<Void, any Error>
        let failure: @Sendable () -> ObserverTestFailure
        let timer: any DispatchSourceTimer
    }

    private let slot = Locked<Pending?>(nil)

    func set(_ pending: Pending) {
        slot.withLock { $0 = pending }
    }

    func succeed() {
        guard let (continuation, outcome) = end(with: { _ in .success(()) }) else { return }
        continuation.resume(with: outcome)
    }

    /// Throws the failure unless the wait ended already (then it is not called).
    func fail() {
        guard let (continuation, outcome) = end(with: { .failure($0.failure()) }) else { return }
        continuation.resume(with: outcome)
    }

    /// Takes the pending wait, cancels its timer and makes the outcome the
    /// waiter resumes with. The pending wait, and what its failure closure
    /// captures (a recorder), are released when this returns: before the
    /// waiter is resumed, so a wait that returned holds nothing.
    private func end(
        with outcome: (Pending) -> Result<Void, ObserverTestFailure>
    ) -> (CheckedContinuation<Void, any Error>, Result<Void, ObserverTestFailure>)? {
        let taken = slot.withLock { slot in
            defer { slot = nil }
            return slot
        }
        guard let pending = taken else { return nil }
        pending.timer.cancel()
        return (pending.continuation, outcome(pending))
    }
}
