import Dispatch
import Foundation
@_spi(EngineDiagnostics) import ObserverEngine
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift
@testable import ObserverSwiftCompat  // ObservableClass (Flowduino's base class) and its registry word

/// What a source costs before it is used, and the structures made on first
/// use: an `Event`'s slot list (first subscribe) and its trigger counter's
/// padded lines (first send from a second thread, or a reset); an
/// `ObservableValue`'s extras (first read, first contended or reentrant set).
final class SourceMemoryTests: XCTestCase {
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

    /// Heap bytes per object made by `make`, by mallinfo2 (nil where it
    /// cannot be read: another platform, a sanitizer). The median of five
    /// measurements: work an earlier test left on other threads (a queued
    /// delivery, a grace period ending) may allocate or free during one, so a
    /// single measurement can read high or low (callers make 100 000
    /// objects, so a few kilobytes allocated or freed elsewhere move the
    /// figure by hundredths of a byte).
    private func bytesEach(_ count: Int, _ make: () -> AnyObject) throws -> Double? {
        try Self.bytesEach(count, make)
    }

    /// ``bytesEach(_:_:)`` for other test classes.
    static func bytesEach(_ count: Int, _ make: () -> AnyObject) throws -> Double? {
        var figures: [Double] = []
        for _ in 0..<5 {
            var kept: [AnyObject] = []
            kept.reserveCapacity(count)
            try ObserverCore.reclaimNow()
            guard let before = HeapBytes.inUse() else { return nil }
            for _ in 0..<count { kept.append(make()) }
            try ObserverCore.reclaimNow()
            guard let after = HeapBytes.inUse() else { return nil }
            withExtendedLifetime(kept) {}
            figures.append(Double(after - before) / Double(count))
        }
        return figures.sorted()[figures.count / 2]
    }

    func testAnEmptyEventIsOneSmallObject() throws {
        // One-off allocations of the process (a thread's first epoch record)
        // may land in a measurement: half a byte per event of slack.
        guard let bytes = try bytesEach(100_000, { Event<Int>() }) else { return }
        XCTAssertLessThanOrEqual(bytes, 48.5, "an empty Event")
        let sent = try bytesEach(100_000) {
            let event = Event<Int>()
            event.send(1)
            event.send(2)
            return event
        }
        XCTAssertLessThanOrEqual(sent ?? 0, 48.5, "sends from one thread allocate nothing")
    }

    /// An `ObservableValue<Int>` nobody read or subscribed to is one 88-byte
    /// object (a 96-byte heap block); sets from one thread, counts and
    /// unsubscribes make nothing. A subscriber costs what it costs an
    /// `Event`: the value adds its 48 bytes of words and copies and nothing else.
    func testAnEmptyObservableValueIsOneSmallObject() throws {
        guard let bytes = try bytesEach(100_000, { ObservableValue(0) }) else { return }
        XCTAssertLessThanOrEqual(bytes, 96.5, "an empty ObservableValue<Int>")
        let set = try bytesEach(100_000) {
            let value = ObservableValue(0)
            value.value = 1
            value.value = 2
            _ = value.subscribersCount
            _ = value.triggersCount
            value.unsubscribeAll()
            return value
        }
        XCTAssertLessThanOrEqual(set ?? 0, 96.5, "sets from one thread and counts allocate nothing")

        let valueWithOne = try bytesEach(100_000) {
            let value = ObservableValue(0)
            _ = value.subscribe { _ in }
            return value
        }
        let eventWithOne = try bytesEach(100_000) {
            let event = Event<Int>()
            _ = event.subscribe { _ in }
            return event
        }
        if let valueWithOne, let eventWithOne {
            XCTAssertLessThanOrEqual(
                valueWithOne - eventWithOne, 48.5, "a subscriber costs a value what it costs an event")
        }

        #if canImport(Observation)
            // The first read makes the extras (96) and the Observation
            // registrar (160 with its state).
            let read = try bytesEach(100_000) {
                let value = ObservableValue(0)
                _ = value.value
                _ = value.value
                return value
            }
            XCTAssertLessThanOrEqual(read ?? 0, 352.5, "an ObservableValue<Int> read once")
        #endif
    }

    /// The extras are made by what needs them, and only then: a read (where
    /// Observation exists), a set from inside a handler, a setter that has
    /// to wait, a value that skips duplicates (at `init`).
    func testTheValueExtrasAreMadeOnFirstUse() {
        let value = ObservableValue(0)
        let received = Received<Int>()
        let token = value.subscribe { received.append($0) }
        value.value = 1
        XCTAssertNil(value.words.extras.plainValue, "a subscribe and an uncontended set make no extras")

        // A handler's set: queued behind the round, in the extras it makes.
        let reentrant = value.subscribe { [value] new in if new == 1 { value.value = 2 } }
        value.value = 1
        XCTAssertNotNil(value.words.extras.plainValue, "a set from a handler made the extras")
        XCTAssertEqual(received.values, [1, 1, 2])
        XCTAssertTrue(value.madeExtras.pending.isEmpty)
        XCTAssertNil(value.madeExtras.roundValue, "nothing of the round is kept once the turn is released")
        reentrant.cancel()
        token.cancel()

        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
                let read = ObservableValue(5)
                XCTAssertEqual(read.value, 5)
                XCTAssertNotNil(read.words.extras.plainValue, "the first read made the extras")
                XCTAssertTrue(read.madeExtras.isArmed, "and the observation")
            }
        #endif

        let skipping = ObservableValue(0, skipsDuplicates: true)
        XCTAssertNotNil(skipping.madeExtras.isDuplicate, "a value that skips duplicates has its check from init")
        let plain = ObservableValue(0, skipsDuplicates: false)
        XCTAssertNil(plain.words.extras.plainValue)

        // A setter finding the turn taken waits, counted in the extras.
        let contended = ObservableValue(0)
        let holder: UInt = 0x1000
        contended.acquireTurn(by: holder)
        let done = DispatchSemaphore(value: 0)
        let setter = Thread {
            contended.value = 7
            done.signal()
        }
        setter.start()
        let deadline = Date(timeIntervalSinceNow: 10)
        while !contended.extras.isMade(ordering: .acquiring)
            || contended.madeExtras.room.waiters.load(ordering: .relaxed) == 0, Date() < deadline
        {
            usleep(1000)
        }
        XCTAssertEqual(contended.madeExtras.room.waiters.load(ordering: .relaxed), 1, "the setter waits in the extras")
        contended.turn.release()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(contended.madeExtras.room.waiters.load(ordering: .relaxed), 0)
        XCTAssertEqual(contended.value, 7)
    }

    /// An empty `KeyedEvent` and an `ObservableClass` no observer was added
    /// to are one small object each; sends and counts make nothing.
    func testEmptyKeyedEventAndObservableClassAreOneSmallObjectEach() throws {
        let keyed = try bytesEach(100_000) {
            let keyed = KeyedEvent<Int, Int>()
            keyed.send(1, forKey: 2)
            _ = keyed.subscribersCount
            return keyed
        }
        XCTAssertLessThanOrEqual(keyed ?? 0, 32.5, "an empty KeyedEvent")
        let observable = try bytesEach(100_000) {
            let observable = ObservableClass()
            observable.withObservers { (_: AnyObject) in }
            _ = observable.observerCount
            return observable
        }
        XCTAssertLessThanOrEqual(observable ?? 0, 32.5, "an ObservableClass without observers")
    }

    /// A registry's identity table starts with two buckets, its lock makes
    /// its condition only for a thread that waits, and its list of stored
    /// observers is made by the first store: an empty `ObserverRegistry` was
    /// 1 104 bytes with all of them made at `init` (mallinfo2), 368 now; one
    /// observer added adds its entry and record (448).
    func testAnObserverRegistryStartsSmall() throws {
        final class Observer: Sendable {}
        let observer = Observer()
        let empty = try bytesEach(100_000) { ObserverRegistry() }
        XCTAssertLessThanOrEqual(empty ?? 0, 400, "an empty ObserverRegistry")
        let withOne = try bytesEach(100_000) {
            let registry = ObserverRegistry()
            registry.addObserver(observer)
            return registry
        }
        XCTAssertLessThanOrEqual(withOne ?? 0, 480, "an ObserverRegistry with one observer")
        withExtendedLifetime(observer) {}
    }

    /// An `Event`'s weak-target subscription is its box, its slot and the
    /// handler's own context: the engine stores the user's `(Target, Value)`
    /// closure as it is, with no adapter closure (and its heap context)
    /// between the box and it. An event with one such subscription measures
    /// 384 bytes (mallinfo2, debug build): the event, its slot list (a weak
    /// target is never a sole handler), the box and the handler's context;
    /// with an adapter it was 448.
    func testAWeakTargetSubscriptionStoresTheHandlerWithoutAnAdapter() throws {
        final class Screen: Sendable {
            func show(_ value: Int) { _ = value }
        }
        let screen = Screen()
        guard
            let bytes = try bytesEach(
                100_000,
                {
                    let event = Event<Int>()
                    event.subscribe(screen) { screen, value in screen.show(value) }
                    return event
                })
        else { return }
        XCTAssertLessThanOrEqual(bytes, 400.5, "an Event with one weak-target subscription")
        withExtendedLifetime(screen) {}
    }

    func testTheRegistryAndTheKeymapAreMadeOnFirstUse() {
        final class Observer: Sendable {}
        let observable = ObservableClass()
        XCTAssertNil(observable.withExistingRegistry { _ in true })
        XCTAssertFalse(observable.removeObserver(Observer()))
        XCTAssertEqual(observable.removeAllObservers(), 0)
        let observer = Observer()
        XCTAssertTrue(observable.addObserver(observer))
        var called = 0
        observable.withObservers { (_: Observer) in called += 1 }
        XCTAssertEqual(called, 1)
        XCTAssertEqual(observable.observerCount, 1)
        XCTAssertTrue(observable.observerRegistry === observable.observerRegistry, "one registry")

        let keyed = KeyedEvent<String, Int>()
        XCTAssertEqual(keyed.unsubscribeAll(), 0)
        XCTAssertEqual(keyed.keys, [])
        XCTAssertNil(keyed.withExistingLists { _ in true })
        let received = Received<Int>()
        let token = keyed.subscribe(key: "a") { received.append($0) }
        keyed.send(1, forKey: "a")
        keyed.send(contentsOf: [2, 3], forKey: "a")
        XCTAssertEqual(received.values, [1, 2, 3])
        token.cancel()
    }

    /// A `KeyedEvent` whose one subscription is a plain closure under one
    /// key, its token kept: the event, the closure's context, the sole
    /// handler with its key and the token, with no keymap (768 bytes with
    /// one: the map, its table, the key's entry and box, a cell and a
    /// registration).
    func testAKeyedEventWithOneClosureAndItsTokenMakesNoKeymap() throws {
        /// The event and its token: 32 bytes, a 48-byte heap block.
        final class Kept {
            let event = KeyedEvent<Int, Int>()
            var token = Subscription.inactive
        }
        guard
            let bytes = try bytesEach(
                100_000,
                {
                    let kept = Kept()
                    kept.token = kept.event.subscribe(key: 1) { _ in }
                    return kept
                })
        else { return }
        XCTAssertLessThanOrEqual(bytes - 48, 192.5, "a KeyedEvent, one key, one closure, token kept")
    }

    /// An `Event` with two plain closures: the second subscription moved
    /// the first from its sole handler into the slot list beside it. The
    /// moved closure is stored as it was subscribed: no wrapper (a
    /// reabstraction thunk's context) between the cell and the closure,
    /// which each later delivery would also run through.
    func testAnEventWithTwoClosuresStoresTheMovedOneAsItWasSubscribed() throws {
        /// The event and its tokens: 40 bytes, a 48-byte heap block.
        final class Kept {
            let event = Event<Int>()
            var tokens = (Subscription.inactive, Subscription.inactive)
        }
        guard
            let bytes = try bytesEach(
                100_000,
                {
                    let kept = Kept()
                    kept.tokens = (kept.event.subscribe { _ in }, kept.event.subscribe { _ in })
                    return kept
                })
        else { return }
        // 720 bytes in this build. A moved closure wrapped in reabstraction
        // thunks adds their two contexts, 48-byte blocks: 816.
        XCTAssertLessThanOrEqual(bytes - 48, 720.5, "an Event with two plain closures, tokens kept")
    }

    /// Sends and counts make nothing; one plain closure makes no list (it
    /// is the sole handler); the first subscription beside it makes one.
    func testTheSlotListIsMadeByTheFirstSubscriptionBesideASoleClosure() {
        let event = Event<Int>()
        event.send(1)
        XCTAssertEqual(event.unsubscribeAll(), 0)
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertNil(event.withExistingSlots { _ in true }, "sends and counts make no list")
        let received = Received<Int>()
        let token = event.subscribe { received.append($0) }
        XCTAssertNil(event.withExistingSlots { _ in true }, "one plain closure makes no list")
        event.send(2)
        event.send(contentsOf: [3, 4])
        XCTAssertEqual(received.values, [2, 3, 4])
        let second = event.subscribe(limit: 1) { received.append($0 * 10) }
        XCTAssertNotNil(event.withExistingSlots { _ in true }, "a second subscription makes the list")
        event.send(5)
        XCTAssertEqual(received.values, [2, 3, 4, 5, 50])
        token.cancel()
        second.cancel()
    }

    /// Threads racing to subscribe first publish one list between them:
    /// every subscription is stored and delivered to.
    func testConcurrentFirstSubscribesShareOneList() {
        for _ in 0..<200 {
            let event = Event<Int>()
            let received = Received<Int>()
            let tokens = Locked<[Subscription]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                let token = event.subscribe { received.append($0 * 10 + index) }
                tokens.withLock { $0.append(token) }
            }
            XCTAssertEqual(event.subscribersCount, 4)
            event.send(1)
            XCTAssertEqual(received.values.sorted(), [10, 11, 12, 13])
            tokens.withLock { $0.forEach { $0.cancel() } }
        }
    }

    /// A second sending thread moves counting to the padded block; counts
    /// stay exact before, across and after the move, and across resets.
    func testTriggerCountsStayExactWhenASecondThreadSends() {
        let event = Event<Int>()
        event.send(0)
        XCTAssertEqual(event.words.triggers.owner.plainValue & 1, 0, "one thread: counted inline")
        let perThread = 50_000
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for value in 0..<perThread { event.send(value) }
        }
        XCTAssertEqual(event.triggersCount, 1 + 4 * perThread)
        XCTAssertEqual(event.words.triggers.owner.plainValue & 1, 1, "counting moved to the block")
        event.resetTriggersCount()
        XCTAssertEqual(event.triggersCount, 0)
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for value in 0..<perThread { event.send(value) }
        }
        XCTAssertEqual(event.triggersCount, 2 * perThread)

        let fresh = Event<Int>()
        fresh.resetTriggersCount()
        XCTAssertEqual(fresh.triggersCount, 0, "a reset before any send")
        fresh.send(1)
        fresh.send(2)
        XCTAssertEqual(fresh.triggersCount, 2, "the first sender after a reset owns the block")
    }
}
