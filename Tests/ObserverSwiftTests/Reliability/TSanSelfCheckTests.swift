import Dispatch
import ObserverSwift
import XCTest

/// Deliberately racy code that ThreadSanitizer must report, to show that the
/// happens-before annotations in the C core (see `oc_epoch.c`) did not blind
/// it. Skipped unless `OBSERVER_TSAN_SELFCHECK=1`; `make tsan-selfcheck` runs
/// it under `--sanitize=thread` and succeeds only if TSan reports a race.
final class TSanSelfCheckTests: XCTestCase {
    /// The publish edge of `subscribe` orders what the subscriber wrote BEFORE
    /// subscribing with the handler; a write AFTER subscribing races with a
    /// send on another thread. The two threads hand over with relaxed atomics,
    /// which create no happens-before edge, so the write and the handler's
    /// read are unordered for TSan as they are for the hardware. Several
    /// rounds on fresh objects, because TSan may miss a single racy pair
    /// (its shadow keeps a few accesses per word).
    func testRaceAfterSubscribeIsReported() throws {
        try XCTSkipUnless(
            ReliabilityEnvironment.isSet("OBSERVER_TSAN_SELFCHECK"),
            "deliberately racy; run by make tsan-selfcheck")
        for round in 0..<20 {
            let event = Event<Int>()
            let shared = RacyBox()
            let token = event.subscribe { _ in shared.total &+= shared.value }
            let written = AtomicCounter()
            let sender = DispatchGroup()
            DispatchQueue.global().async(group: sender) {
                while written.value == 0 {}  // relaxed spin: no edge
                event.send(round)
            }
            shared.value = round + 1  // races with the handler's read
            written.increment()
            sender.wait()
            token.cancel()
        }
    }
}

private final class RacyBox: @unchecked Sendable {
    // @unchecked on purpose: this type exists to race.
    var value = 0
    var total = 0
}
