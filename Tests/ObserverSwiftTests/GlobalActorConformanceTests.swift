import Dispatch
import Foundation
import ObserverEngine
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

@globalActor
actor JobWorker {
    static let shared = JobWorker()
}

protocol JobProgressObserving: AnyObject {
    func progressed(_ percent: Int)
}

/// A class isolated to a global actor other than the main actor, whose
/// conformance is isolated to that actor.
@JobWorker
final class Job {
    var received: [Int] = []
    var calledOffItsActor = 0
    let onProgress: @Sendable (Int) -> Void

    nonisolated init(onProgress: @escaping @Sendable (Int) -> Void) {
        self.onProgress = onProgress
    }

    /// What it received, and how many calls ran off its actor.
    func report() -> (received: [Int], calledOffItsActor: Int) { (received, calledOffItsActor) }
}

extension Job: @JobWorker JobProgressObserving {
    func progressed(_ percent: Int) {
        // The runtime lets a cast to an isolated conformance succeed only on
        // its actor: this is the check that the call runs there.
        if (self as AnyObject) as? any JobProgressObserving == nil { calledOffItsActor += 1 }
        received.append(percent)
        onProgress(percent)
    }
}

/// An isolated conformance to a global actor other than the main actor is
/// delivered on that actor by every notifying call of both registries,
/// in order, wherever the call comes from (issue 27: "an isolated
/// conformance is either delivered on its actor or refused when it is
/// added").
final class GlobalActorConformanceTests: XCTestCase {
    /// Runs `body` on a new thread (off every actor) and waits for it.
    private func onBackgroundThread(_ body: @escaping @Sendable () -> Void) {
        let done = expectation(description: "background call")
        Thread {
            body()
            done.fulfill()
        }.start()
        waitUntilFulfilled([done], timeout: 30)
    }

    private func makeJob(expecting count: Int) -> (Job, XCTestExpectation) {
        let delivered = expectation(description: "\(count) deliveries")
        delivered.expectedFulfillmentCount = count
        delivered.assertForOverFulfill = true
        return (Job { _ in delivered.fulfill() }, delivered)
    }

    func testTheRuntimeReportsTheGlobalActorOfTheConformance() {
        let job = Job { _ in }
        let isolation = ConformanceIsolation.of(job, as: (any JobProgressObserving).self)
        guard case .otherGlobalActor(let actorType) = isolation else {
            return XCTFail("expected an isolation to JobWorker, got \(isolation)")
        }
        XCTAssertTrue(actorType.type == JobWorker.self)
        XCTAssertTrue(actorType.shared === JobWorker.shared)
    }

    // Before: called 0 of 3 times (the box was never made: "not stored for P").
    func testWithObserversCallsItOnItsActorFromEveryThread() async {
        let registry = ObserverRegistry()
        let (job, delivered) = makeJob(expecting: 3)
        registry.addObserver(job)
        onBackgroundThread {
            registry.withObservers { (observer: JobProgressObserving) in observer.progressed(1) }
        }
        registry.withObservers { (observer: JobProgressObserving) in observer.progressed(2) }
        await MainActor.run {
            registry.withObservers { (observer: JobProgressObserving) in observer.progressed(3) }
        }
        await fulfillment(of: [delivered], timeout: 30)
        let (received, calledOffItsActor) = await job.report()
        XCTAssertEqual(received, [1, 2, 3], "every call, in the order sent")
        XCTAssertEqual(calledOffItsActor, 0, "always on JobWorker")
    }

    // Whatever the registration's delivery: its methods can only run on its actor.
    func testTheRegistrationsDeliveryDoesNotMoveItOffItsActor() async {
        let registry = ObserverRegistry()
        let (job, delivered) = makeJob(expecting: 2)
        registry.addObserver(job, delivery: .queue(.main))
        registry.withObservers { (observer: JobProgressObserving) in observer.progressed(1) }
        await MainActor.run {
            registry.withObservers { (observer: JobProgressObserving) in observer.progressed(2) }
        }
        await fulfillment(of: [delivered], timeout: 30)
        let calledOffItsActor = await job.report().calledOffItsActor
        XCTAssertEqual(calledOffItsActor, 0)
    }

    func testManySendsFromSeveralThreadsArriveInEachSendersOrder() async {
        let registry = ObserverRegistry()
        let count = 200
        let (job, delivered) = makeJob(expecting: 2 * count)
        registry.addObserver(job)
        onBackgroundThread {
            DispatchQueue.concurrentPerform(iterations: 2) { sender in
                for index in 0..<count {
                    registry.withObservers { (observer: JobProgressObserving) in
                        observer.progressed(sender * 1_000 + index)
                    }
                }
            }
        }
        await fulfillment(of: [delivered], timeout: 60)
        let received = await job.report().received
        XCTAssertEqual(received.filter { $0 < 1_000 }, Array(0..<count))
        XCTAssertEqual(received.filter { $0 >= 1_000 }, Array(1_000..<(1_000 + count)))
    }

    func testARemovedObserverIsNotCalledByWhatWasQueuedBeforeTheRemoval() async {
        let registry = ObserverRegistry()
        let (job, delivered) = makeJob(expecting: 1)
        registry.addObserver(job)
        // Holds the actor, so that the next call waits in the queue.
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Task { @JobWorker in
            entered.signal()
            release.wait()
        }
        entered.wait()
        registry.withObservers { (observer: JobProgressObserving) in observer.progressed(1) }
        XCTAssertTrue(registry.removeObserver(job))
        release.signal()
        registry.addObserver(job)
        registry.withObservers { (observer: JobProgressObserving) in observer.progressed(2) }
        await fulfillment(of: [delivered], timeout: 30)
        let received = await job.report().received
        XCTAssertEqual(received, [2], "the call queued before the removal was dropped")
    }

    // Before: called 0 of 2 times.
    func testKeyedRegistryCallsItOnItsActor() async {
        let registry = KeyedObserverRegistry()
        let (job, delivered) = makeJob(expecting: 2)
        let other = Job { _ in XCTFail("another key's observer") }
        registry.addObserver(job, key: "render")
        registry.addObserver(other, key: "upload")
        onBackgroundThread {
            registry.withObservers(forKey: "render") { (_: String, observer: JobProgressObserving) in
                observer.progressed(10)
            }
        }
        registry.withObservers(forKey: "render") { (_: String, observer: JobProgressObserving) in
            observer.progressed(20)
        }
        await fulfillment(of: [delivered], timeout: 30)
        let (received, calledOffItsActor) = await job.report()
        let otherReceived = await other.report().received
        XCTAssertEqual(received, [10, 20])
        XCTAssertEqual(calledOffItsActor, 0)
        XCTAssertEqual(otherReceived, [], "another key's observer")
    }
}
