import Dispatch
import ObserverSwift
import XCTest

/// Deliberately racy code that ThreadSanitizer must report, to show that the
/// happens-before annotations in the C core (see `oc_epoch.c`) did not blind
/// it. Skipped unless `OBSERVER_TSAN_SELFCHECK=1`; `make tsan-selfcheck` runs
/// it under `--sanitize=thread` and succeeds only if TSan reports a race.
final class TSanSelfCheckTests: XCTestCase {
    func testRaceAfterSubscribeIsReported() throws {
        try XCTSkipUnless(ReliabilityEnvironment.isSet("OBSERVER_TSAN_SELFCHECK"),
                          "deliberately racy; run by make tsan-selfcheck")
        let event = Event<Int>()
        let shared = RacyBox()
        let stop = AtomicCounter()
        // The publish edge orders what the subscriber wrote BEFORE subscribing
        // with the handler; a write AFTER subscribing is a real race with a
        // concurrent send, which must stay visible to TSan.
        let token = event.subscribe { _ in shared.total &+= shared.value }
        let sender = DispatchGroup()
        DispatchQueue.global().async(group: sender) {
            while stop.value == 0 { event.send(1) }
        }
        for index in 0..<10_000 {
            shared.value = index  // races with the handler's read
        }
        stop.increment()
        sender.wait()
        token.cancel()
    }
}

private final class RacyBox: @unchecked Sendable {
    // @unchecked on purpose: this type exists to race.
    var value = 0
    var total = 0
}
