import ObserverSwift
import XCTest

/// A dead target's box may still be stored (nothing has noticed the death
/// yet) when a new object is allocated at the dead target's address.
/// `unsubscribe(newObject)` must not match it: the new object never
/// subscribed.
final class AddressReuseTests: XCTestCase {
    private final class Target: Sendable {}

    /// Subscribes a target with `subscribe`, lets it die while its box is
    /// still stored, then allocates 1 000 new objects and hands each to
    /// `check`. The box holds its target `unowned`, which keeps the dead
    /// target's memory allocated: no new object may be given its address
    /// (asserted), and whatever `check` asserts must hold for every one.
    private func withNewObjectsAfterATargetDied(
        subscribedBy subscribe: (Target) -> Void, check: (Target) -> Void
    ) {
        var target: Target? = Target()
        subscribe(target!)
        let address = ObjectIdentifier(target!)
        target = nil
        var newcomers: [Target] = []
        for _ in 0..<1_000 { newcomers.append(Target()) }
        XCTAssertFalse(
            newcomers.contains { ObjectIdentifier($0) == address },
            "a new object was given the address of a dead target whose box is stored")
        for newcomer in newcomers { check(newcomer) }
    }

    func testEventUnsubscribeDoesNotMatchAnObjectAtADeadTargetsAddress() {
        let event = Event<Int>()
        withNewObjectsAfterATargetDied(
            subscribedBy: { event.subscribe($0) { _, _ in } },
            check: { newcomer in
                XCTAssertEqual(event.unsubscribe(newcomer), 0, "an object that never subscribed was unsubscribed")
            }
        )
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testKeyedEventUnsubscribeDoesNotMatchAnObjectAtADeadTargetsAddress() {
        let event = KeyedEvent<String, Int>()
        withNewObjectsAfterATargetDied(
            subscribedBy: { event.forKeys(["a", "b"]).subscribe($0) { _, _ in } },
            check: { newcomer in
                XCTAssertEqual(event.unsubscribe(newcomer), 0, "an object that never subscribed was unsubscribed")
                XCTAssertEqual(event.unsubscribe(newcomer, key: "a"), 0)
            }
        )
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testObservableValueUnbindDoesNotMatchAnObjectAtADeadTargetsAddress() {
        let value = ObservableValue(0)
        withNewObjectsAfterATargetDied(
            subscribedBy: { value.subscribe($0) { _, _ in } },
            check: { newcomer in
                XCTAssertEqual(value.unsubscribe(newcomer), 0, "an object that never bound was unbound")
            }
        )
        XCTAssertEqual(value.subscribersCount, 0)
    }

    func testANewObjectCanSubscribeAndUnsubscribeItself() {
        let event = Event<Int>()
        withNewObjectsAfterATargetDied(
            subscribedBy: { event.subscribe($0) { _, _ in } },
            check: { newcomer in
                let calls = KeyedCounter()
                event.subscribe(newcomer) { _, _ in calls.increment() }
                XCTAssertEqual(event.unsubscribe(newcomer), 1, "only the newcomer's own subscription")
                event.send(1)
                XCTAssertEqual(calls.value, 0)
            }
        )
    }

    /// Protocol registries hold observers `unowned`, which keeps a dead
    /// observer's memory allocated while its record exists: no new object
    /// can be given that address, so `removeObserver` cannot confuse them.
    func testObserverRegistryRemoveObserverDoesNotMatchANewObject() {
        let registry = ObserverRegistry()
        var observer: Target? = Target()
        registry.addObserver(observer!)
        let address = ObjectIdentifier(observer!)
        observer = nil
        var newcomers: [Target] = []
        for _ in 0..<1_000 { newcomers.append(Target()) }
        XCTAssertFalse(newcomers.contains { ObjectIdentifier($0) == address })
        for newcomer in newcomers { XCTAssertFalse(registry.removeObserver(newcomer)) }
        XCTAssertEqual(registry.observerCount, 0)
    }
}
