import Dispatch
import Foundation
import ObserverEngine
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// Main-actor observers see values in the order they were sent or set, also
/// when an earlier value, sent from another thread, is still queued on the
/// main queue when a later one is sent on the main actor.
final class MainActorOrderTests: XCTestCase {
    final class Shown: @unchecked Sendable {
        // @unchecked: touched on the main actor only.
        var text = ""
    }

    func testValueObserversSeeSetsInSetOrder() throws {
        try XCTSkipUnless(Thread.isMainThread, "needs the main thread")
        for trial in 0..<20 {
            let number = ObservableValue(0)
            let added = Received<Int>()
            let bound = Received<Int>()
            let shown = Shown()
            let observer = number.subscribe { @MainActor value in added.append(value) }
            number.subscribe(shown) { @MainActor shown, value in
                shown.text = "\(value)"
                bound.append(value)
            }
            // Set 1 on a background thread: it returns with the deliveries
            // enqueued on the main queue (this thread is busy here).
            JoinableThread { number.value = 1 }.join()
            // Set 2 on the main actor, while 1 is still queued.
            number.value = 2
            runMainLoop { added.count == 2 && bound.count == 2 }
            XCTAssertEqual(added.values, [1, 2], "trial \(trial)")
            XCTAssertEqual(bound.values, [1, 2], "trial \(trial)")
            XCTAssertEqual(shown.text, "\(number.value)", "the last value shown is the current one")
            observer.cancel()
        }
    }

    func testEventMainActorHandlersKeepTheOrderOfOneSenderAcrossThreads() throws {
        try XCTSkipUnless(Thread.isMainThread, "needs the main thread")
        let event = Event<Int>()
        let received = Received<Int>()
        let token = event.subscribe { @MainActor value in received.append(value) }
        spawnThread { event.send(1) }.wait()
        event.send(2)
        runMainLoop { received.count == 2 }
        XCTAssertEqual(received.values, [1, 2], "a send on the main actor does not overtake a queued one")
        // With nothing queued, a send on the main actor runs the handler before it returns.
        event.send(3)
        XCTAssertEqual(received.values, [1, 2, 3])
        token.cancel()
    }

    func testMainQueueWorkOffTheMainThreadCountsAsTheMainActor() {
        // Inside main-queue work, wherever libdispatch runs it.
        let onMainActor = Locked<Bool?>(nil)
        DispatchQueue.main.async { onMainActor.withLock { $0 = MainActorDeliveries.isOnMainActor } }
        runMainLoop { onMainActor.withLock { $0 } != nil }
        XCTAssertEqual(onMainActor.withLock { $0 }, true)
        let elsewhere = Locked<Bool?>(nil)
        spawnThread { elsewhere.withLock { $0 = MainActorDeliveries.isOnMainActor } }.wait()
        XCTAssertEqual(elsewhere.withLock { $0 }, false)
    }
}
