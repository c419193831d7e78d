import Dispatch
import Foundation
import XCTest

@testable import ObserverSwiftCompat

private protocol LevelObserver: AnyObject {
    func level(_ value: Int)
}

private final class LevelSink: LevelObserver, @unchecked Sendable {
    // @unchecked: `values` is guarded by `lock`.
    private let lock = NSLock()
    private var stored: [Int] = []
    func level(_ value: Int) { lock.withLock { stored.append(value) } }
    var values: [Int] { lock.withLock { stored } }
}

private final class Tank: ObservableClass {
    func report(_ value: Int) {
        withObservers { (observer: LevelObserver) in observer.level(value) }
    }
    func dispatch(_ value: Int) {
        dispatchToObservers { (observer: LevelObserver) in observer.level(value) }
    }
}

private final class Gauges: KeyedObservableClass {
    func report(_ gauge: String, _ value: Int) {
        withKeyedObservers(key: gauge) { (_, observer: LevelObserver) in observer.level(value) }
    }
}

/// Flowduino's non-escaping `withObservers` can call an observer only here and
/// now; one added with a queue delivery is not called by it, and that is
/// reported (counted, and written to standard error once per process),
/// never silent. `dispatchToObservers` reaches it on its queue.
final class FlowduinoDeliveryTests: XCTestCase {
    func testNonEscapingWithObserversReportsAQueuedObserverItCannotCall() {
        let tank = Tank()
        let direct = LevelSink()
        let queued = LevelSink()
        let queue = DispatchQueue(label: "flowduino-delivery.queue")
        tank.addObserver(direct)
        tank.addObserver(queued, delivery: .queue(queue))
        let before = ObserversNotCalled.notCalledSoFar
        tank.report(1)
        XCTAssertEqual(direct.values, [1])
        XCTAssertEqual(ObserversNotCalled.notCalledSoFar - before, 1, "the queued observer is reported")
        tank.dispatch(2)
        queue.sync {}
        XCTAssertEqual(direct.values, [1, 2])
        XCTAssertEqual(queued.values, [2], "dispatchToObservers reaches it on its queue")
    }

    func testSynchronousObserversAloneReportNothing() {
        let tank = Tank()
        let direct = LevelSink()
        tank.addObserver(direct)
        let before = ObserversNotCalled.notCalledSoFar
        tank.report(1)
        XCTAssertEqual(direct.values, [1])
        XCTAssertEqual(ObserversNotCalled.notCalledSoFar, before)
    }

    func testNonEscapingWithKeyedObserversReportsAQueuedObserver() {
        let gauges = Gauges()
        let queued = LevelSink()
        let queue = DispatchQueue(label: "flowduino-delivery.keyed")
        gauges.addKeyedObserver(key: "oil", queued, delivery: .queue(queue))
        let before = ObserversNotCalled.notCalledSoFar
        gauges.report("oil", 3)
        XCTAssertEqual(ObserversNotCalled.notCalledSoFar - before, 1)
        gauges.dispatchToKeyedObservers(key: "oil") { (_: String, observer: LevelObserver) in observer.level(4) }
        queue.sync {}
        XCTAssertEqual(queued.values, [4])
    }
}
