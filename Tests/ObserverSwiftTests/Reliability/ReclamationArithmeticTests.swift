import CObserverCore
import Dispatch
import Foundation
@_spi(EngineDiagnostics) import ObserverSwift
import ObserverTestSupport
import XCTest

/// Deterministic reclamation arithmetic: a sender parked inside a send (its
/// handler blocks on a semaphore on another thread) holds back the release of
/// everything it may still see; once it leaves, one barrier releases all of it.
final class ReclamationArithmeticTests: XCTestCase {
    /// Barriers until nothing is pending. Other threads (a previous test's
    /// queued deliveries, the observer-group sweeper) may retire objects at
    /// any moment, so one barrier is not always the last word.
    private func drainPending() throws -> Int {
        let deadline = DispatchTime.now() + .seconds(5)
        repeat {
            try ObserverCore.reclaimNow()
            if ObserverCore.statistics.pendingObjects == 0 { return 0 }
            usleep(10_000)
        } while DispatchTime.now() < deadline
        return ObserverCore.statistics.pendingObjects
    }

    func testParkedSenderDelaysReclamationUntilItLeaves() throws {
        XCTAssertEqual(try drainPending(), 0, "retired objects stay pending with no sender inside a send")
        let liveBaseline = ReliabilityLiveInstances.current
        let event = Event<Int>()
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let parker = event.subscribe { value in
            guard value == 1 else { return }
            entered.signal()
            proceed.wait()
        }
        let victim = subscribeTracked(to: event)
        XCTAssertEqual(ReliabilityLiveInstances.current, liveBaseline + 1)

        let sender = DispatchGroup()
        DispatchQueue.global().async(group: sender) { event.send(1) }
        entered.wait()  // the sender is now inside its read section

        XCTAssertTrue(victim.cancel())
        // Writers poll past a pending threshold; poll explicitly too, and retire more
        // (subscribe/cancel churn on another event) so the epoch gets every
        // chance to advance.
        let other = Event<Int>()
        for _ in 0..<100 {
            oc_reclaim_poll()
            other.subscribe { _ in }.cancel()
        }
        let parked = ObserverCore.statistics
        XCTAssertGreaterThan(parked.pendingObjects, 0, "nothing retired is pending while a sender is parked")
        XCTAssertEqual(
            ReliabilityLiveInstances.current, liveBaseline + 1,
            "the cancelled handler's capture was released while a sender that may see it was still inside its send")

        proceed.signal()
        sender.wait()
        XCTAssertEqual(try drainPending(), 0)
        let after = ObserverCore.statistics
        XCTAssertEqual(after.pendingBytes, 0)
        XCTAssertGreaterThan(after.reclaimedObjects, parked.reclaimedObjects)
        XCTAssertEqual(ReliabilityLiveInstances.current, liveBaseline)
        parker.cancel()
        XCTAssertEqual(try drainPending(), 0)
    }

    func testBarrierFromInsideASendThrowsInsteadOfHanging() throws {
        let event = Event<Int>()
        let errors = Received<ObserverError>()
        let token = event.subscribe { _ in
            do throws(ObserverError) { try ObserverCore.reclaimNow() } catch { errors.append(error) }
            do throws(ObserverError) { try ObserverCore.waitForDeliveriesInFlight() } catch { errors.append(error) }
        }
        event.send(0)
        XCTAssertEqual(errors.values, [.waitInsideDelivery, .waitInsideDelivery])
        token.cancel()
    }

    private func subscribeTracked(to event: Event<Int>) -> Subscription {
        let capture = ReliabilityTrackedCapture()
        return event.subscribe { _ in capture.checkIntact() }
    }
}
