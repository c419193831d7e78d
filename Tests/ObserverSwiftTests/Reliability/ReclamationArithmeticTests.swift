import CObserverCore
import Dispatch
import ObserverSwift
import XCTest

/// Deterministic reclamation arithmetic: a sender parked inside a send (its
/// handler blocks on a semaphore on another thread) holds back the release of
/// everything it may still see; once it leaves, one barrier releases all of it.
final class ReclamationArithmeticTests: XCTestCase {
    func testParkedSenderDelaysReclamationUntilItLeaves() throws {
        try ObserverCore.reclaimNow()
        XCTAssertEqual(ObserverCore.statistics.pendingObjects, 0, "a previous test left retired objects behind")
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
        // Writers poll on every change; poll explicitly too, and retire more
        // (subscribe/cancel churn on another event) so the epoch gets every
        // chance to advance.
        let other = Event<Int>()
        for _ in 0..<100 {
            oc_reclaim_poll()
            other.subscribe { _ in }.cancel()
        }
        let parked = ObserverCore.statistics
        XCTAssertGreaterThan(parked.pendingObjects, 0, "nothing retired is pending while a sender is parked")
        XCTAssertEqual(ReliabilityLiveInstances.current, liveBaseline + 1,
                       "the cancelled handler's capture was released while a sender that may see it was still inside its send")

        proceed.signal()
        sender.wait()
        try ObserverCore.reclaimNow()
        let after = ObserverCore.statistics
        XCTAssertEqual(after.pendingObjects, 0)
        XCTAssertEqual(after.pendingBytes, 0)
        XCTAssertGreaterThan(after.reclaimedObjects, parked.reclaimedObjects)
        XCTAssertEqual(ReliabilityLiveInstances.current, liveBaseline)
        parker.cancel()
        try ObserverCore.reclaimNow()
        XCTAssertEqual(ObserverCore.statistics.pendingObjects, 0)
    }

    func testBarrierFromInsideASendThrowsInsteadOfHanging() throws {
        let event = Event<Int>()
        var errors: [ObserverError] = []
        event.subscribe { _ in
            do throws(ObserverError) { try ObserverCore.reclaimNow() } catch { errors.append(error) }
            do throws(ObserverError) { try ObserverCore.waitForDeliveriesInFlight() } catch { errors.append(error) }
        }
        event.send(0)
        XCTAssertEqual(errors, [.waitInsideDelivery, .waitInsideDelivery])
    }

    private func subscribeTracked(to event: Event<Int>) -> Subscription {
        let capture = ReliabilityTrackedCapture()
        return event.subscribe { _ in capture.checkIntact() }
    }
}
