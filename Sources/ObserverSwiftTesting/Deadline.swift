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
func wait(
    until deadline: Deadline, orFail failure: @escaping @Sendable () -> ObserverTestFailure,
    start: (_ done: @escaping @Sendable () -> Void) -> Void
) async throws {
    let once = OneShot()
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        once.set(continuation)
        DispatchQueue.global().asyncAfter(deadline: deadline.time) { once.fail(failure) }
        start { once.succeed() }
    }
}

/// A continuation resumed by whichever comes first.
private final class OneShot: Sendable {
    private let slot = Locked<CheckedContinuation<Void, any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<Void, any Error>) {
        slot.withLock { $0 = continuation }
    }

    func succeed() { take()?.resume() }

    /// Throws `failure()` unless the wait ended already (then `failure` is not called).
    func fail(_ failure: () -> ObserverTestFailure) {
        guard let taken = take() else { return }
        taken.resume(throwing: failure())
    }

    private func take() -> CheckedContinuation<Void, any Error>? {
        slot.withLock { slot in
            defer { slot = nil }
            return slot
        }
    }
}
