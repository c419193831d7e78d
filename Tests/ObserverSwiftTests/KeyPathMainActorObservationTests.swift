import Dispatch
import Foundation
import ObserverEngine
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// A key-path observer whose handler is marked `@MainActor` runs on the main
/// actor, wherever the write comes from, in the order of the writes (issue
/// 27's case 5 for key-path observation: the one way for a closure to run on
/// the main actor).
final class KeyPathMainActorObservationTests: XCTestCase {
    final class Gauge: KeyPathObservable, @unchecked Sendable {
        // @unchecked: the property wrapper's storage is internally synchronized.
        @ObservableProperty var level = 0
    }

    @MainActor
    final class GaugeView {
        var shown: [String] = []
        var calledOffTheMainActor = 0
    }

    private func drainMainQueue() {
        let drained = expectation(description: "main queue drained")
        DispatchQueue.main.async { drained.fulfill() }
        waitUntilFulfilled([drained], timeout: 30)
    }

    // XCTest runs each test on the main thread: `onMain` reads main-actor
    // state there.
    private func onMain<T: Sendable>(_ body: @MainActor () -> T) -> T {
        MainActor.assumeIsolated(body)
    }

    func testAMainActorHandlerRunsOnTheMainActorForWritesFromEveryThread() {
        let gauge = Gauge()
        let view = onMain { GaugeView() }
        let observer = gauge.observe(\.$level) { @MainActor old, new in
            if !MainActorDeliveries.isOnMainActor { view.calledOffTheMainActor += 1 }
            view.shown.append("\(old)->\(new)")
        }
        gauge.level = 1
        XCTAssertEqual(onMain { view.shown }, ["0->1"], "a write on the main actor: at once")
        let written = expectation(description: "background writes")
        Thread {
            gauge.level = 2
            gauge.level = 3
            written.fulfill()
        }.start()
        waitUntilFulfilled([written], timeout: 30)
        drainMainQueue()
        XCTAssertEqual(onMain { view.shown }, ["0->1", "1->2", "2->3"])
        XCTAssertEqual(onMain { view.calledOffTheMainActor }, 0)
        observer.deactivate()
        gauge.level = 4
        drainMainQueue()
        XCTAssertEqual(onMain { view.shown.count }, 3, "nothing after deactivate()")
    }

    func testAnInactiveMainActorObserverStartsWithActivate() {
        let gauge = Gauge()
        let view = onMain { GaugeView() }
        let observer = gauge.observe(\.$level, activate: false) { @MainActor _, new in view.shown.append("\(new)") }
        gauge.level = 1
        observer.activate()
        gauge.level = 2
        XCTAssertEqual(onMain { view.shown }, ["2"])
    }

    func testAQueueDeliveryRunsOnItsQueue() {
        let gauge = Gauge()
        let queue = DispatchQueue(label: "key-path.queue")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let received = Received<Int>()
        let observer = gauge.observe(\.$level, delivery: .queue(queue)) { _, new in
            XCTAssertEqual(DispatchQueue.getSpecific(key: key), true)
            received.append(new)
        }
        gauge.level = 5
        queue.sync {}
        XCTAssertEqual(received.values, [5])
        observer.deactivate()
    }
}
