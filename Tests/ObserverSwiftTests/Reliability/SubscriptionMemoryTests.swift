@_spi(EngineDiagnostics) import ObserverEngine
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// What a closure subscription, its token and an `Event` with one closure
/// cost. A class of its own, run after `SourceMemoryTests`, and the test
/// that makes 100 000 subscriptions last in it: the heap it leaves behind
/// (many freed small chunks) makes later small-object measurements read a
/// little high.
final class SubscriptionMemoryTests: XCTestCase {
    private var wasTrackingSubscriptions = false

    /// These measure the engine's own bytes: subscription tracking (on in
    /// this process once a test used ObserverSwiftTesting) adds a record to
    /// every subscription made while it is on.
    override func setUp() {
        super.setUp()
        wasTrackingSubscriptions = ObserverCore.isTrackingSubscriptions
        ObserverCore.isTrackingSubscriptions = false
    }

    override func tearDown() {
        ObserverCore.isTrackingSubscriptions = wasTrackingSubscriptions
        super.tearDown()
    }

    /// A cell is the metatype of the class that destroys it, then the
    /// closure: 24 bytes whatever the value type (what
    /// `TypedHandlerCellKind.destroy` relies on).
    func testACellIsTwentyFourBytes() {
        XCTAssertEqual(MemoryLayout<HandlerCellContents<Int>>.size, 24)
        XCTAssertEqual(MemoryLayout<HandlerCellContents<String>>.size, 24)
        XCTAssertEqual(MemoryLayout<HandlerCellContents<(Int, String, [Double])>>.size, 24)
        XCTAssertEqual(MemoryLayout<HandlerCellKind.Type>.stride, 8)
    }

    /// A token is one 40-byte object (a 48-byte heap block): its flag and
    /// handle, and one reference (its list, or what cancels a keyed
    /// subscription).
    func testATokenIsOneSmallObject() throws {
        let event = Event<Int>()
        let keyed = KeyedEvent<Int, Int>()
        let bytes = try SourceMemoryTests.bytesEach(100_000) { Subscription(list: nil, handle: SlotHandle.notAdded) }
        XCTAssertLessThanOrEqual(bytes ?? 0, 48.5, "a token")
        let token = event.subscribe { _ in }
        let keyedToken = keyed.subscribe(key: 1) { _ in }
        let multiKeyToken = keyed.forKeys([1, 2]).subscribe { _, _ in }
        XCTAssertTrue(token.isActive && keyedToken.isActive && multiKeyToken.isActive)
        XCTAssertTrue(token.cancel() && keyedToken.cancel() && multiKeyToken.cancel())
        XCTAssertFalse(token.isActive || keyedToken.isActive || multiKeyToken.isActive)
        XCTAssertFalse(token.cancel() || keyedToken.cancel() || multiKeyToken.cancel())
        XCTAssertFalse(Subscription.inactive.isActive)
        XCTAssertFalse(Subscription.inactive.cancel())
    }

    /// A plain closure subscription is its closure in a 24-byte cell (a
    /// 32-byte heap block) plus its slot (16 bytes, times the list's growth
    /// slack: 100 000 slots take an array of 131 072) plus the closure's
    /// context: a closure passed as an `@isolated(any)` handler carries its
    /// isolation there, so one that captures nothing still has a 32-byte
    /// context (a 48-byte heap block). Its token is one 40-byte object (a
    /// 48-byte heap block). Closures capture nothing.
    func testPerObserverMemoryIsACellAndASlot() throws {
        let count = 100_000
        let event = Event<Int>()
        try ObserverCore.reclaimNow()
        guard let before = HeapBytes.inUse() else { return }
        for _ in 0..<count { _ = event.subscribe { _ in } }
        try ObserverCore.reclaimNow()
        guard let after = HeapBytes.inUse() else { return }
        XCTAssertLessThanOrEqual(Double(after - before) / Double(count), 101.5, "per closure observer, token dropped")
        XCTAssertEqual(event.subscribersCount, count)
        event.unsubscribeAll()

        let kept = Event<Int>()
        var tokens: [Subscription] = []
        tokens.reserveCapacity(count)
        try ObserverCore.reclaimNow()
        guard let keptBefore = HeapBytes.inUse() else { return }
        for _ in 0..<count { tokens.append(kept.subscribe { _ in }) }
        try ObserverCore.reclaimNow()
        guard let keptAfter = HeapBytes.inUse() else { return }
        XCTAssertLessThanOrEqual(
            Double(keptAfter - keptBefore) / Double(count), 149.5, "per closure observer, token kept")
        XCTAssertEqual(tokens.filter { $0.cancel() }.count, count)
        XCTAssertEqual(kept.subscribersCount, 0)
    }

    /// An `Event<Int>` with one closure subscriber: the event (a 48-byte
    /// block), its sole handler (48) and the closure's context, which holds
    /// its isolation (48), no slot list; the token kept adds its own block
    /// (48). An `ObservableValue<Int>` likewise, from its 96-byte block.
    func testASourceWithOneClosureSubscriberIsItsObjectAndItsSoleHandler() throws {
        let forms: [(String, Double, () -> AnyObject)] = [
            (
                "Event, token dropped", 144.5,
                {
                    let event = Event<Int>()
                    _ = event.subscribe { _ in }
                    return event
                }
            ),
            (
                "Event, token kept", 192.5,
                {
                    let event = Event<Int>()
                    return SourceAndToken(source: event, token: event.subscribe { _ in })
                }
            ),
            (
                "ObservableValue, token dropped", 192.5,
                {
                    let value = ObservableValue(0)
                    _ = value.subscribe { _ in }
                    return value
                }
            ),
        ]
        for (name, limit, make) in forms {
            guard let bytes = try SourceMemoryTests.bytesEach(100_000, make) else { return }
            // The token-kept form pays for the object holding the pair too
            // (two references: a 48-byte block).
            let pair: Double = name.hasSuffix("token kept") ? 48 : 0
            XCTAssertLessThanOrEqual(bytes - pair, limit, name)
        }
    }

    /// A closure's cell releases what the closure captured once it is
    /// cancelled (after the grace period), or when its event is deallocated;
    /// a cancelled closure is never called again.
    func testACellReleasesItsCapturesOnCancelAndWithItsEvent() throws {
        final class Captured: Sendable {}
        weak var cancelledCapture: Captured?
        weak var droppedCapture: Captured?
        let event = Event<Int>()
        let received = Received<Int>()
        var token: Subscription?
        do {
            let captured = Captured()
            cancelledCapture = captured
            token = event.subscribe { value in withExtendedLifetime(captured) { received.append(value) } }
        }
        var dropped: Event<Int>? = Event<Int>()
        do {
            let captured = Captured()
            droppedCapture = captured
            _ = dropped?.subscribe { _ in withExtendedLifetime(captured) {} }
        }
        event.send(1)
        XCTAssertNotNil(cancelledCapture)
        XCTAssertEqual(token?.cancel(), true)
        XCTAssertEqual(token?.isActive, false)
        event.send(2)
        dropped = nil
        try ObserverCore.reclaimNow()
        XCTAssertNil(cancelledCapture, "a cancelled cell is freed after its grace period")
        XCTAssertNil(droppedCapture, "an event's cells are freed with it")
        XCTAssertEqual(received.values, [1])
        withExtendedLifetime(token) {}
    }

    /// Cells beside boxes in one list: sends reach both in slot order;
    /// removals by target leave cells, removals of closure subscriptions
    /// take them; counts include them; a sweep of expired boxes keeps them.
    func testCellsAndBoxesShareAList() throws {
        final class Target: Sendable {}
        let event = Event<Int>()
        let received = Received<String>()
        let target = Target()
        let first = event.subscribe { received.append("cell \($0)") }
        event.subscribe(target) { _, value in received.append("target \(value)") }
        let limited = event.subscribe(limit: 1) { received.append("limited \($0)") }
        _ = event.subscribe { received.append("second cell \($0)") }
        XCTAssertEqual(event.subscribersCount, 4)
        event.send(1)
        XCTAssertEqual(received.values, ["cell 1", "target 1", "limited 1", "second cell 1"])
        XCTAssertFalse(limited.isActive)
        XCTAssertEqual(event.subscribersCount, 3)
        XCTAssertEqual(event.unsubscribe(target), 1)
        XCTAssertEqual(event.subscribersCount, 2)
        XCTAssertTrue(first.cancel())
        event.send(2)
        XCTAssertEqual(received.values.suffix(1), ["second cell 2"])

        let value = ObservableValue(0)
        let closures = Received<Int>()
        _ = value.subscribe { closures.append($0) }
        value.subscribe(target) { _, _ in }
        XCTAssertEqual(value.unsubscribeAll(withTargets: false), 1, "the closure's cell")
        XCTAssertEqual(value.unsubscribeAll(withTargets: true), 1, "the target's box")
        value.value = 1
        XCTAssertEqual(closures.values.filter { $0 == 1 }, [])
    }
}

/// A source and a token, kept together by a memory measurement.
private final class SourceAndToken {
    let source: AnyObject
    let token: Subscription
    init(source: AnyObject, token: Subscription) {
        self.source = source
        self.token = token
    }
}
