import Dispatch
import ObserverEngine
import ObserverSwift
import XCTest

/// Keyed subscriptions that expire on a send (a spent `limit:`, a dead
/// target) while other threads subscribe and cancel under the same key.
/// Under `make tsan` any ThreadSanitizer report fails the run, so this is
/// the proof that such a user program is clean; in every build it checks
/// the delivery accounting (a `limit: 1` subscription is called at most once).
final class KeyedExpiryRaceTests: XCTestCase {
    private final class Target: Sendable {}

    func testKeyedLimitAndTargetExpiryRacingSubscribeAndCancel() {
        let event = KeyedEvent<Int, Int>()
        let rounds = ReliabilityEnvironment.isSanitized ? 3_000 : 20_000
        let overDelivered = HeapAtomicWord<Int>(0)
        let delivered = HeapAtomicWord<Int>(0)
        let stop = HeapAtomicWord<Bool>(false)
        let group = DispatchGroup()

        DispatchQueue.global().async(group: group) {
            var value = 0
            while !stop.load(ordering: .relaxed) {
                value &+= 1
                event.send(value, forKey: value & 1)
            }
        }
        DispatchQueue.global().async(group: group) {
            for round in 0..<rounds {
                let calls = HeapAtomicWord<Int>(0)
                let once = event.forKeys([0, 1]).subscribe(limit: 1) { _, _ in
                    if calls.wrappingAdd(1, ordering: .relaxed).newValue > 1 {
                        overDelivered.wrappingAdd(1, ordering: .relaxed)
                    }
                    delivered.wrappingAdd(1, ordering: .relaxed)
                }
                var target: Target? = Target()
                let bound = event.subscribe(target!, key: round & 1, limit: 2) { _, _ in }
                if round & 3 == 0 { target = nil }
                if round & 1 == 0 { once.cancel() }
                bound.cancel()
                withExtendedLifetime(target) {}
            }
            stop.store(true, ordering: .relaxed)
        }
        group.wait()
        XCTAssertEqual(overDelivered.load(ordering: .relaxed), 0, "a limit: 1 subscription was called twice")
        XCTAssertGreaterThan(delivered.load(ordering: .relaxed), 0, "the sender never reached a subscription")
        event.unsubscribeAll()
    }
}
