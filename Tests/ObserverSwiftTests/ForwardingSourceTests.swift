import Dispatch
import ObserverSwift
import ObserverTestSupport
import XCTest

/// A type outside the library conforms to ``ObserverSource`` by forwarding
/// its three requirements to a library source (what the protocol's
/// documentation shows): every subscribe form then behaves on it as on that
/// source.
final class ForwardingSourceTests: XCTestCase {
    /// A source of one's own over an `ObservableValue`'s replaying view
    /// (`replays: true`) or over the value itself.
    struct Thermometer: ObserverSource {
        let reading = ObservableValue(20)
        let replays: Bool

        func _subscribe(
            delivery: Delivery, limit: Int?, replaying current: Int?, _ handler: @escaping @Sendable (Int) -> Void
        ) -> Subscription {
            replays
                ? reading.replaying._subscribe(delivery: delivery, limit: limit, replaying: current, handler)
                : reading._subscribe(delivery: delivery, limit: limit, replaying: current, handler)
        }

        func _subscribe<Target: AnyObject>(
            _ target: Target, delivery: Delivery, limit: Int?, replaying current: Int?,
            _ handler: @escaping @Sendable (Target, Int) -> Void
        ) -> Subscription {
            replays
                ? reading.replaying._subscribe(target, delivery: delivery, limit: limit, replaying: current, handler)
                : reading._subscribe(target, delivery: delivery, limit: limit, replaying: current, handler)
        }

        func _withCurrentValue<Result>(_ body: (Int?) -> Result) -> Result {
            replays ? reading.replaying._withCurrentValue(body) : reading._withCurrentValue(body)
        }
    }

    final class Gauge: Sendable {
        let shown = Received<Int>()
    }

    func testAClosureRunsOnTheSendingThreadWithItsLimit() {
        let thermometer = Thermometer(replays: false)
        let received = Received<Int>()
        let token = thermometer.subscribe(limit: 2) { received.append($0) }
        thermometer.reading.value = 21
        XCTAssertEqual(received.values, [21], "delivered before the set returned")
        thermometer.reading.value = 22
        thermometer.reading.value = 23
        XCTAssertEqual(received.values, [21, 22], "the limit counts through the forwarding source")
        XCTAssertFalse(token.isActive)
    }

    func testAForwardedReplayingViewReplaysTheCurrentValueFirst() {
        let thermometer = Thermometer(replays: true)
        let received = Received<Int>()
        let token = thermometer.subscribe(limit: 2) { received.append($0) }
        XCTAssertEqual(received.values, [20], "the current value, replayed at subscribe")
        thermometer.reading.value = 21
        thermometer.reading.value = 22
        XCTAssertEqual(received.values, [20, 21], "the replay is the first of the limit's deliveries")
        XCTAssertFalse(token.isActive)
    }

    func testAWeakTargetEndsWithItsTarget() {
        let thermometer = Thermometer(replays: false)
        var gauge: Gauge? = Gauge()
        let shown = gauge!.shown
        thermometer.subscribe(gauge!) { gauge, degrees in gauge.shown.append(degrees) }
        thermometer.reading.value = 21
        XCTAssertEqual(shown.values, [21])
        gauge = nil
        thermometer.reading.value = 22
        XCTAssertEqual(shown.values, [21], "nothing after the target is gone")
        XCTAssertEqual(thermometer.reading.subscribersCount, 0)
    }

    func testQueueAndActorFormsDeliverInOrder() {
        let thermometer = Thermometer(replays: false)
        let queue = DispatchQueue(label: "forwarding")
        let queued = Received<Int>()
        let done = DispatchSemaphore(value: 0)
        let onQueue = thermometer.subscribe(delivery: .queue(queue)) { degrees in
            queued.append(degrees)
            if degrees == 23 { done.signal() }
        }
        actor Log {
            var lines: [Int] = []
            func append(_ degrees: Int) { lines.append(degrees) }
        }
        let log = Log()
        let logged = DispatchSemaphore(value: 0)
        let onActor = thermometer.subscribe(isolatedTo: log) { log, degrees in
            log.append(degrees)
            if degrees == 23 { logged.signal() }
        }
        for degrees in 21...23 { thermometer.reading.value = degrees }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(logged.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(queued.values, [21, 22, 23])
        onQueue.cancel()
        onActor.cancel()
    }
}
