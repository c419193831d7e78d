@_spi(EngineDiagnostics) import ObserverEngine
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// The lifetime rules table of the README and of the ThreadingAndLifetime
/// article, one test per row.
final class LifetimeRulesTests: XCTestCase {
    private final class Target: Sendable {}

    /// Subscribes a closure capturing `tracker` and drops the token.
    private func subscribeDroppingTheToken(
        to event: Event<Int>, _ received: Received<Int>, tracker: LifetimeTracker
    ) {
        _ = event.subscribe { value in
            _ = tracker.id
            received.append(value)
        }
    }

    func testDroppedClosureTokenLeavesTheSubscriptionUntilTheSourceGoes() throws {
        let baseline = LifetimeTracker.alive.load(ordering: .relaxed)
        var event: Event<Int>? = Event<Int>()
        let received = Received<Int>()
        subscribeDroppingTheToken(to: event!, received, tracker: LifetimeTracker())
        event!.send(1)
        event!.send(2)
        XCTAssertEqual(received.values, [1, 2], "a dropped token does not cancel")
        XCTAssertEqual(event!.subscribersCount, 1)
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline + 1)
        event = nil
        try ObserverCore.reclaimNow()
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline, "the source's deinit ends it")
    }

    func testDeallocatedWeakTargetEndsItsSubscriptionAndFreesTheSlot() {
        let event = Event<Int>()
        let received = Received<Int>()
        var target: Target? = Target()
        event.subscribe(target!) { _, value in received.append(value) }
        event.send(1)
        target = nil
        event.send(2)
        XCTAssertEqual(received.values, [1])
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertEqual(event.slots.storedCount, 0, "the dead target's slot is freed")
    }

    /// The same row on a source that is never sent to nor counted: the
    /// subscribes and cancels that happen anyway free the dead target's slot
    /// and release its box (whose unowned reference kept the target's
    /// memory), on every kind with weak targets.
    func testDeallocatedWeakTargetIsFreedOnAQuietSourceBySubscribesAndCancels() throws {
        try ObserverCore.reclaimNow()
        let baseline = LifetimeTracker.alive.load(ordering: .relaxed)
        let event = Event<Int>()
        let value = ObservableValue(0)
        let keyed = KeyedEvent<String, Int>()
        let registry = ObserverRegistry()
        var target: Target? = Target()
        do {
            let tracker = LifetimeTracker()
            event.subscribe(target!) { _, _ in _ = tracker.id }
            value.subscribe(target!) { _, _ in _ = tracker.id }
            keyed.subscribe(target!, key: "dead") { _, _ in _ = tracker.id }
            registry.addObserver(target!)
        }
        target = nil
        XCTAssertEqual(event.slots.storedCount, 1, "nothing has met the dead target yet")
        XCTAssertEqual(keyed.keyCount, 1)
        XCTAssertEqual(registry.entryCount, 1)

        event.subscribe { _ in }.cancel()
        value.subscribe { _ in }.cancel()
        keyed.subscribe(key: "other") { _ in }.cancel()
        // A registry sweeps when an add would grow its table: a new
        // registry's (16 buckets, at most 8 entries) on the 8th add after the
        // dead one.
        let others = (0..<8).map { _ in Target() }
        for other in others { registry.addObserver(other) }

        XCTAssertEqual(event.slots.storedCount, 0, "the dead target's slot is freed")
        XCTAssertEqual(value.observers.slots.storedCount, 0, "the dead binding's slot is freed")
        XCTAssertEqual(keyed.keyCount, 0, "the dead target's slot, and its key, are freed")
        XCTAssertEqual(registry.entryCount, others.count, "the dead observer is dropped")
        try ObserverCore.reclaimNow()
        XCTAssertEqual(
            LifetimeTracker.alive.load(ordering: .relaxed), baseline, "the boxes holding the dead target are released")
    }

    func testDeallocatedEventEndsEverySubscriptionAndReleasesHandlers() throws {
        let baseline = LifetimeTracker.alive.load(ordering: .relaxed)
        var event: Event<Int>? = Event<Int>()
        let target = Target()
        let tokens: [Subscription] = (0..<3).map { _ in
            let tracker = LifetimeTracker()
            return event!.subscribe { _ in _ = tracker.id }
        }
        let targetTracker = LifetimeTracker()
        let targetToken = event!.subscribe(target) { _, _ in _ = targetTracker.id }
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline + 4)
        event = nil
        try ObserverCore.reclaimNow()
        XCTAssertEqual(
            LifetimeTracker.alive.load(ordering: .relaxed), baseline + 1,
            "only the test's own reference to the target's tracker is left")
        for token in tokens + [targetToken] {
            XCTAssertFalse(token.isActive)
            XCTAssertFalse(token.cancel(), "cancelling after the source is gone reports false")
        }
    }

    func testDeallocatedObservableValueEndsEverySubscriptionAndReleasesHandlers() throws {
        let baseline = LifetimeTracker.alive.load(ordering: .relaxed)
        var value: ObservableValue<Int>? = ObservableValue(0)
        let token: Subscription = {
            let tracker = LifetimeTracker()
            return value!.subscribe { _ in _ = tracker.id }
        }()
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline + 1)
        value = nil
        try ObserverCore.reclaimNow()
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline)
        XCTAssertFalse(token.cancel())
    }

    func testDeallocatedBagCancelsEveryStoredSubscription() throws {
        let baseline = LifetimeTracker.alive.load(ordering: .relaxed)
        let event = Event<Int>()
        let received = Received<Int>()
        var bag: SubscriptionBag? = SubscriptionBag()
        for multiplier in [1, 10] {
            let tracker = LifetimeTracker()
            event.subscribe { value in
                _ = tracker.id
                received.append(value * multiplier)
            }.store(in: bag!)
        }
        event.send(1)
        bag = nil
        event.send(2)
        XCTAssertEqual(received.values.sorted(), [1, 10])
        XCTAssertEqual(event.subscribersCount, 0)
        try ObserverCore.reclaimNow()
        XCTAssertEqual(LifetimeTracker.alive.load(ordering: .relaxed), baseline)
    }
}
