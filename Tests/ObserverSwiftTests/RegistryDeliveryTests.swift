import Dispatch
import Foundation
import ObserverEngine
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

protocol DownloadObserving: AnyObject {
    func downloaded(_ bytes: Int)
}

/// A main-actor class whose conformance is isolated: the fix the Swift 6
/// compiler suggests for a main-actor class adopting a plain protocol.
@MainActor
final class DownloadScreen {
    var shown: [Int] = []
    var calledOffTheMainActor = 0
}

extension DownloadScreen: @MainActor DownloadObserving {
    func downloaded(_ bytes: Int) {
        if !MainActorDeliveries.isOnMainActor { calledOffTheMainActor += 1 }
        shown.append(bytes)
    }
}

/// Every registered observer is reached by every notifying call, where the
/// delivery it was added with says (issue 27's silent cases 1 to 4).
final class RegistryDeliveryTests: XCTestCase {
    /// Lets the main queue run what was enqueued on it before this call.
    private func drainMainQueue() {
        let drained = expectation(description: "main queue drained")
        DispatchQueue.main.async { drained.fulfill() }
        waitUntilFulfilled([drained], timeout: 30)
    }

    /// Runs `body` on a new thread (off the main actor) and waits for it.
    private func onBackgroundThread(_ body: @escaping @Sendable () -> Void) {
        let done = expectation(description: "background call")
        Thread {
            XCTAssertFalse(MainActorDeliveries.isOnMainActor)
            body()
            done.fulfill()
        }.start()
        waitUntilFulfilled([done], timeout: 30)
    }

    // Case 1: before, 0 of 2 calls (withObservers skipped every observer not synchronous).
    func testMainActorObserverIsCalledByWithObserversFromEveryThread() {
        let registry = ObserverRegistry()
        let sink = ProgressSink()
        registry.addObserver(sink, delivery: .queue(.main))
        registry.withObservers { (observer: ProgressObserving) in
            XCTAssertTrue(MainActorDeliveries.isOnMainActor)
            observer.progressed(1)
        }
        onBackgroundThread {
            registry.withObservers { (observer: ProgressObserving) in
                XCTAssertTrue(MainActorDeliveries.isOnMainActor)
                observer.progressed(2)
            }
        }
        drainMainQueue()
        XCTAssertEqual(sink.received.values, [1, 2])
    }

    // Case 2: before, 0 of 1 calls.
    func testQueueObserverIsCalledByWithObserversOnItsQueue() {
        let registry = ObserverRegistry()
        let sink = ProgressSink()
        let queue = DispatchQueue(label: "registry-delivery.queue")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        registry.addObserver(sink, delivery: .queue(queue))
        registry.withObservers { (observer: ProgressObserving) in
            XCTAssertEqual(DispatchQueue.getSpecific(key: key), true, "runs on the observer's queue")
            observer.progressed(1)
        }
        queue.sync {}
        XCTAssertEqual(sink.received.values, [1])
    }

    // Case 3: before, 0 of 1 calls.
    func testKeyedMainActorObserverIsCalledByWithObserversForKey() {
        let registry = KeyedObserverRegistry()
        let sink = ProgressSink()
        let other = ProgressSink()
        registry.addObserver(sink, key: "download", delivery: .queue(.main))
        registry.addObserver(other, key: "upload", delivery: .queue(.main))
        onBackgroundThread {
            registry.withObservers(forKey: "download") { (key: String, observer: ProgressObserving) in
                XCTAssertEqual(key, "download")
                XCTAssertTrue(MainActorDeliveries.isOnMainActor)
                observer.progressed(1)
            }
        }
        drainMainQueue()
        XCTAssertEqual(sink.received.values, [1])
        XCTAssertEqual(other.received.values, [], "another key's observer")
    }

    func testSynchronousAndQueuedObserversAreEachCalledWhereTheirDeliverySays() {
        let registry = ObserverRegistry()
        let direct = ProgressSink()
        let queued = ProgressSink()
        let queue = DispatchQueue(label: "registry-delivery.mixed")
        registry.addObserver(direct)
        registry.addObserver(queued, delivery: .queue(queue))
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        registry.withObservers { (observer: ProgressObserving) in observer.progressed(1) }
        XCTAssertEqual(direct.received.values, [1], "synchronous: called before withObservers returns")
        XCTAssertEqual(queued.received.values, [], "queued: not yet")
        gate.signal()
        queue.sync {}
        XCTAssertEqual(queued.received.values, [1])
    }

    // Case 4: before, the observer was never called: the first withObservers,
    // off the main actor, cast it (`as? P` fails there for an isolated
    // conformance) and left it out of the protocol's list for good.
    @MainActor
    func testIsolatedConformanceFirstNotifiedFromABackgroundThreadIsCalledOnTheMainActor() {
        let registry = ObserverRegistry()
        let screen = DownloadScreen()
        registry.addObserver(screen)
        onBackgroundThread {
            registry.withObservers { (observer: DownloadObserving) in observer.downloaded(1) }
        }
        drainMainQueue()
        XCTAssertEqual(screen.shown, [1], "delivered on the main actor")
        registry.withObservers { (observer: DownloadObserving) in observer.downloaded(2) }
        XCTAssertEqual(screen.shown, [1, 2], "on the main actor with nothing queued: at once")
        onBackgroundThread {
            registry.withObservers { (observer: DownloadObserving) in observer.downloaded(3) }
        }
        drainMainQueue()
        XCTAssertEqual(screen.shown, [1, 2, 3])
        XCTAssertEqual(screen.calledOffTheMainActor, 0)
    }

    @MainActor
    func testIsolatedConformanceFirstNotifiedOnTheMainActorIsStillCalledThereFromOtherThreads() {
        let registry = ObserverRegistry()
        let screen = DownloadScreen()
        registry.addObserver(screen)
        registry.withObservers { (observer: DownloadObserving) in observer.downloaded(1) }
        XCTAssertEqual(screen.shown, [1])
        onBackgroundThread {
            registry.withObservers { (observer: DownloadObserving) in observer.downloaded(2) }
        }
        drainMainQueue()
        XCTAssertEqual(screen.shown, [1, 2])
        XCTAssertEqual(screen.calledOffTheMainActor, 0, "never called off its actor")
    }

    @MainActor
    func testKeyedIsolatedConformanceFirstNotifiedFromABackgroundThreadIsCalled() {
        let registry = KeyedObserverRegistry()
        let screen = DownloadScreen()
        registry.addObserver(screen, key: 7)
        onBackgroundThread {
            registry.withObservers(forKey: 7) { (_: Int, observer: DownloadObserving) in observer.downloaded(7) }
        }
        drainMainQueue()
        XCTAssertEqual(screen.shown, [7])
        XCTAssertEqual(screen.calledOffTheMainActor, 0)
    }

    @MainActor
    func testAnIsolatedConformanceIsSeenAsOneAndANonConformingObserverIsNot() {
        let screen = DownloadScreen()
        XCTAssertEqual(ConformanceIsolation.of(screen, as: (any DownloadObserving).self), .mainActor)
        XCTAssertEqual(ConformanceIsolation.of(screen, as: (any ProgressObserving).self), .none)
        XCTAssertEqual(ConformanceIsolation.of(ProgressSink(), as: (any ProgressObserving).self), .nonisolated)
        XCTAssertEqual(ConformanceIsolation.of(ProgressSink(), as: AnyObject.self), .nonisolated)
        XCTAssertEqual(ConformanceIsolation.of(screen, as: (any DownloadObserving & AnyObject).self), .mainActor)
    }

    func testANonConformingObserverIsNeverCalledWhereverTheListIsBuilt() {
        let registry = ObserverRegistry()
        let sink = ProgressSink()
        registry.addObserver(sink)
        onBackgroundThread {
            registry.withObservers { (_: DownloadObserving) in XCTFail("ProgressSink is no DownloadObserving") }
        }
        drainMainQueue()
        XCTAssertEqual(registry.view(for: (any DownloadObserving).self).conforming.storedCount, 0)
    }

    // The non-escaping form (ObserverSwiftCompat's Flowduino spelling is made
    // of it) says how many observers it could not call, instead of skipping
    // them without a word.
    func testTheNonEscapingFormCountsTheObserversItCannotCallHere() {
        let registry = ObserverRegistry()
        let direct = ProgressSink()
        let queued = ProgressSink()
        let queue = DispatchQueue(label: "registry-delivery.here")
        registry.addObserver(direct)
        registry.addObserver(queued, delivery: .queue(queue))
        var calls = 0
        let notCalled = registry.withObserversCallableHere { (observer: ProgressObserving) in
            calls += 1
            observer.progressed(1)
        }
        XCTAssertEqual(calls, 1)
        XCTAssertEqual(notCalled, 1)
        XCTAssertEqual(direct.received.values, [1])
    }

    @MainActor
    func testTheNonEscapingFormCallsMainActorObserversOnTheMainActor() {
        let registry = ObserverRegistry()
        let sink = ProgressSink()
        let screen = DownloadScreen()
        registry.addObserver(sink, delivery: .queue(.main))
        registry.addObserver(screen)
        drainMainQueue()
        XCTAssertEqual(
            registry.withObserversCallableHere { (observer: ProgressObserving) in observer.progressed(1) }, 1,
            "a queue's observer is not called here, .queue(.main) included")
        XCTAssertEqual(
            registry.withObserversCallableHere { (observer: DownloadObserving) in observer.downloaded(1) }, 0)
        XCTAssertEqual(sink.received.values, [])
        XCTAssertEqual(screen.shown, [1], "the main-actor conformance, called at once on the main actor")
    }
}
