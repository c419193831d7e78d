import Dispatch
import Foundation
@_spi(EngineDiagnostics) import ObserverEngine
import ObserverSwiftCompat  // Flowduino's array forms: addObserver([a, b]), removeObserver([a, b])
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

final class KeyedObserverRegistryTests: XCTestCase {

    /// Calls every `AlphaObserver` of `key` with `value`; returns the keys
    /// the closure received.
    @discardableResult
    private func sendAlpha<Key: Hashable>(_ registry: KeyedObserverRegistry, _ key: Key, _ value: Int) -> [Key] {
        var keys: [Key] = []
        registry.withKeyedObservers(key: key) { (key, observer: AlphaObserver) in
            keys.append(key)
            observer.alpha(value)
        }
        return keys
    }

    /// The registry a key's box holds (nil when the key has none).
    private func keyRegistry<Key: Hashable>(_ registry: KeyedObserverRegistry, _ key: Key) -> ObserverRegistry? {
        var found: ObserverRegistry?
        registry.lists.forEach(forKey: key) { found = $0.registry }
        return found
    }

    // MARK: Exactness

    func testWithKeyedObserversCallsExactlyTheObserversOfThatKeyWithTheKey() {
        let registry = KeyedObserverRegistry()
        let onA = AlphaOnly("a")
        let onB = AlphaOnly("b")
        let onBoth = AlphaOnly("both")
        XCTAssertTrue(registry.addObserver(onA, key: "A").isActive)
        XCTAssertTrue(registry.addObserver(onB, key: "B").isActive)
        XCTAssertEqual(registry.addKeyedObserver(keys: ["A", "B"], onBoth), 2)

        XCTAssertEqual(sendAlpha(registry, "A", 1).sorted(), ["A", "A"])
        XCTAssertEqual(onA.recorded, ["alpha 1"])
        XCTAssertEqual(onB.recorded, [])
        XCTAssertEqual(onBoth.recorded, ["alpha 1"])

        sendAlpha(registry, "B", 2)
        XCTAssertEqual(onA.recorded, ["alpha 1"])
        XCTAssertEqual(onB.recorded, ["alpha 2"])
        XCTAssertEqual(onBoth.recorded, ["alpha 1", "alpha 2"])

        XCTAssertEqual(sendAlpha(registry, "nobody", 3), [], "a key without observers calls nobody")
        XCTAssertEqual(onA.callCount + onB.callCount + onBoth.callCount, 4)
        XCTAssertEqual(registry.keyCount, 2)
    }

    func testSeveralKeysAtOnceInOrderAndKeysOfSeveralTypesNeverMatch() {
        let registry = KeyedObserverRegistry()
        let stringOne = AlphaOnly("\"1\"")
        let intOne = AlphaOnly("1")
        let colliding = AlphaOnly("colliding 2")
        registry.addObserver(stringOne, key: "1")
        registry.addObserver(intOne, key: 1)
        registry.addObserver(colliding, key: CollidingKey(id: 2))
        XCTAssertEqual(registry.keyCount, 3, "one registry, three key types")

        var calls: [String] = []
        registry.withKeyedObservers(keys: ["1", "2", "1"]) { (key, observer: AlphaObserver) in
            calls.append("\(key) → \((observer as! RecordingObserver).name)")
        }
        XCTAssertEqual(calls, ["1 → \"1\"", "1 → \"1\""], "in the order of the keys, each key each time")

        sendAlpha(registry, 1, 10)
        sendAlpha(registry, CollidingKey(id: 1), 11)  // same hash as id 2, not equal
        sendAlpha(registry, CollidingKey(id: 2), 12)
        XCTAssertEqual(intOne.recorded, ["alpha 10"])
        XCTAssertEqual(colliding.recorded, ["alpha 12"])
        XCTAssertEqual(stringOne.recorded, [])
    }

    func testArrayAddAndRemoveForOneKeyAndSeveralKeys() {
        let registry = KeyedObserverRegistry()
        let first = AlphaOnly("first")
        let second = AlphaOnly("second")
        let third = AlphaOnly("third")

        XCTAssertEqual(registry.addKeyedObserver(keys: ["A", "B"], [first, second]), 4)
        XCTAssertEqual(registry.addKeyedObserver(keys: ["A", "B"], [first, second]), 0, "already there")
        XCTAssertFalse(registry.addObserver(first, key: "A").isActive)
        XCTAssertEqual(registry.addKeyedObserver(key: "C", [first, third]), 2)
        XCTAssertEqual(registry.observerCount(forKey: "A"), 2)
        XCTAssertEqual(registry.observerCount(forKey: "C"), 2)
        XCTAssertTrue(registry.contains(third, key: "C"))
        XCTAssertFalse(registry.contains(third, key: "A"))

        XCTAssertEqual(registry.removeKeyedObserver(key: "A", [first, second, third]), 2, "third was not on A")
        XCTAssertEqual(registry.observerCount(forKey: "A"), 0)
        XCTAssertEqual(registry.removeKeyedObserver(keys: ["B", "C"], first), 2)
        XCTAssertEqual(registry.removeKeyedObserver(keys: ["A", "B", "C"], [second, third]), 2)
        XCTAssertEqual(registry.keyCount, 0, "every key was emptied and freed")
        XCTAssertEqual(registry.lists.keyCount, 0)

        for key in ["A", "B", "C"] { sendAlpha(registry, key, 1) }
        XCTAssertEqual(first.callCount + second.callCount + third.callCount, 0)
    }

    func testBadInputIsANoOp() {
        let registry = KeyedObserverRegistry()
        let observer = AlphaOnly("observer")
        let stranger = AlphaOnly("stranger")
        XCTAssertFalse(registry.removeObserver(observer, key: "absent"), "unknown key")
        registry.addObserver(observer, key: "A")
        XCTAssertFalse(registry.removeObserver(stranger, key: "A"), "not registered there")
        XCTAssertFalse(registry.removeObserver(observer, key: 7), "same observer, other key type")
        XCTAssertTrue(registry.removeObserver(observer, key: "A"))
        XCTAssertFalse(registry.removeObserver(observer, key: "A"), "double remove")
        XCTAssertEqual(registry.removeObserver(stranger), 0)
        XCTAssertEqual(registry.removeAllObservers(key: "A"), 0)
        XCTAssertEqual(registry.removeAllObservers(), 0)
        XCTAssertEqual(registry.removeKeyedObserver(keys: [String](), observer), 0)
        registry.withKeyedObservers(keys: [String]()) { (_, _: AlphaObserver) in XCTFail("no keys") }
        XCTAssertEqual(registry.keyCount, 0)
    }

    func testRemovingFromEveryKeyAndRemovingAll() {
        let registry = KeyedObserverRegistry()
        let roamer = AlphaOnly("roamer")
        let stay = AlphaOnly("stay")
        registry.addKeyedObserver(keys: ["A", "B"], roamer)
        registry.addObserver(roamer, key: 3)
        registry.addObserver(stay, key: "B")
        XCTAssertEqual(registry.removeObserver(roamer), 3, "every key, every key type")
        XCTAssertEqual(registry.keyCount, 1, "A and 3 were freed, B keeps stay")
        sendAlpha(registry, "B", 1)
        XCTAssertEqual(roamer.recorded, [])
        XCTAssertEqual(stay.recorded, ["alpha 1"])

        registry.addKeyedObserver(keys: ["A", "B"], roamer)
        XCTAssertEqual(registry.removeAllObservers(key: "B"), 2)
        XCTAssertEqual(registry.keyCount, 1)
        XCTAssertEqual(registry.removeAllObservers(), 1)
        XCTAssertEqual(registry.keyCount, 0)
        sendAlpha(registry, "A", 2)
        XCTAssertEqual(roamer.recorded, [])
    }

    // MARK: Protocols

    func testProtocolFilteringIsPerKey() {
        let registry = KeyedObserverRegistry()
        let alpha = AlphaOnly("alpha")
        let beta = BetaOnly("beta")
        let both = AlphaAndBeta("both")
        let neither = Neither("n")
        registry.addKeyedObserver(key: "left", [alpha, beta, neither])
        registry.addKeyedObserver(key: "right", [both, neither])

        var called: [String] = []
        func record(_ key: String, _ observer: Any) {
            called.append("\(key):\((observer as! RecordingObserver).name)")
        }
        registry.withKeyedObservers(key: "left") { (key, observer: AlphaObserver) in record(key, observer) }
        XCTAssertEqual(called, ["left:alpha"])
        called = []
        registry.withKeyedObservers(key: "left") { (key, observer: BetaObserver) in record(key, observer) }
        XCTAssertEqual(called, ["left:beta"])
        called = []
        registry.withKeyedObservers(key: "right") { (key, observer: AlphaObserver & BetaObserver) in
            record(key, observer)
        }
        registry.withKeyedObservers(key: "right") { (key, observer: LooseObserver) in record(key, observer) }
        XCTAssertEqual(called, ["right:both", "right:both"], "compositions and non-class protocols")
        called = []
        registry.withKeyedObservers(key: "left") { (key, observer: AnyObject) in record(key, observer) }
        XCTAssertEqual(called.sorted(), ["left:alpha", "left:beta", "left:n"])
    }

    func testConformanceIsDecidedOncePerObserverKeyAndProtocol() {
        let registry = KeyedObserverRegistry()
        let alpha = AlphaOnly("alpha")
        let beta = BetaOnly("beta")
        registry.addKeyedObserver(key: "K", [alpha, beta])
        XCTAssertNil(keyRegistry(registry, "K")!.existingView(for: (any AlphaObserver).self), "no view before use")
        sendAlpha(registry, "K", 1)

        // The key's AlphaObserver view holds the one conforming observer,
        // its cast stored: the send path does no `as?`.
        let keyed = keyRegistry(registry, "K")!
        let view = keyed.existingView(for: (any AlphaObserver).self)!
        var stored: [ObjectIdentifier] = []
        view.slots.forEachBox { box in
            let conforming = box as! ConformingObserver<any AlphaObserver>
            XCTAssertTrue(conforming.hasStoredCast)
            stored.append(conforming.identifier)
        }
        XCTAssertEqual(stored, [ObjectIdentifier(alpha)])

        // Later calls reuse it; a later observer is cast once into it.
        sendAlpha(registry, "K", 2)
        XCTAssertTrue(keyed.existingView(for: (any AlphaObserver).self) === view)
        let late = AlphaOnly("late")
        registry.addObserver(late, key: "K")
        XCTAssertEqual(view.slots.storedCount, 2)
        sendAlpha(registry, "K", 3)
        XCTAssertEqual(alpha.recorded, ["alpha 1", "alpha 2", "alpha 3"])
        XCTAssertEqual(late.recorded, ["alpha 3"])
        XCTAssertEqual(beta.recorded, [])
    }

    // MARK: Weak references and reclamation

    func testObserversAreHeldWeaklyDeadOnesAreNeverCalledAndTheirKeysAreReclaimed() {
        let registry = KeyedObserverRegistry()
        let ledger = LivenessLedger()
        let keeper = AlphaOnly("keeper")
        registry.addObserver(keeper, key: "kept")
        weak var weakTransient: TransientAlpha?
        do {
            let transient = TransientAlpha(ledger)
            weakTransient = transient
            registry.addKeyedObserver(keys: ["kept", "doomed"], transient)
            sendAlpha(registry, "doomed", 1)
            XCTAssertEqual(ledger.calls.load(ordering: .relaxed), 1)
        }
        XCTAssertNil(weakTransient, "the registry must not retain observers")
        sendAlpha(registry, "doomed", 2)
        sendAlpha(registry, "kept", 3)
        XCTAssertEqual(ledger.calls.load(ordering: .relaxed), 1)
        XCTAssertEqual(ledger.callsOnDead.load(ordering: .relaxed), 0)
        XCTAssertEqual(keeper.recorded, ["alpha 3"])

        // A send found it dead: the next writer call drops it everywhere and
        // frees "doomed" (now empty); "kept" keeps its keeper.
        XCTAssertEqual(registry.lists.keyCount, 2)
        registry.addObserver(keeper, key: "other")
        XCTAssertEqual(registry.lists.keyCount, 2, "doomed freed, other created")
        XCTAssertNil(keyRegistry(registry, "doomed"))
        XCTAssertEqual(keyRegistry(registry, "kept")!.observerCount, 1)
    }

    func testObserverDeallocatedWithoutAnySendIsDroppedByTheCounts() {
        let registry = KeyedObserverRegistry()
        do {
            let transient = AlphaOnly("transient")
            registry.addKeyedObserver(keys: ["x", "y"], transient)
        }
        XCTAssertEqual(registry.lists.keyCount, 2, "no send has seen it die yet")
        XCTAssertEqual(registry.observerCount(forKey: "x"), 0)
        XCTAssertEqual(registry.lists.keyCount, 1, "counting x freed it")
        XCTAssertEqual(registry.keyCount, 0, "keyCount sweeps every key")
        var calls = 0
        registry.withKeyedObservers(key: "y") { (_, _: AlphaObserver) in calls += 1 }
        XCTAssertEqual(calls, 0)
    }

    func testFreedKeysAreReleasedByTheCore() throws {
        try ObserverCore.reclaimNow()
        let keysBefore = ObserverCore.liveKeys
        let deinitsBefore = TrackedKey.deinits.load(ordering: .relaxed)
        let registry = KeyedObserverRegistry()
        let observer = AlphaOnly("observer")
        XCTAssertEqual(registry.addKeyedObserver(keys: (0..<20).map(TrackedKey.init), observer), 20)
        XCTAssertEqual(ObserverCore.liveKeys - keysBefore, 20)
        registry.withKeyedObservers(key: TrackedKey(3)) { (_, observer: AlphaObserver) in observer.alpha(3) }
        XCTAssertEqual(observer.recorded, ["alpha 3"])
        XCTAssertEqual(registry.removeKeyedObserver(keys: (0..<20).map(TrackedKey.init), observer), 20)
        XCTAssertEqual(ObserverCore.liveKeys, keysBefore, "every key freed with its last observer")
        try ObserverCore.reclaimNow()
        // The 20 keys the core stored (and the 1 + 20 used to send and
        // remove) are released once the grace period has passed.
        XCTAssertEqual(TrackedKey.deinits.load(ordering: .relaxed) - deinitsBefore, 41)
    }

    // MARK: Reentrancy

    final class Reentrant: AlphaObserver, @unchecked Sendable {
        // @unchecked: `action` and `callCount` are only touched while `lock` is held.
        let registry: KeyedObserverRegistry
        private let lock = NSLock()
        private var action: @Sendable (Reentrant) -> Void = { _ in }
        private var callCount = 0
        init(_ registry: KeyedObserverRegistry) { self.registry = registry }
        var onAlpha: @Sendable (Reentrant) -> Void {
            get { lock.withLock { action } }
            set { lock.withLock { action = newValue } }
        }
        var calls: Int { lock.withLock { callCount } }
        func alpha(_ value: Int) {
            let action = lock.withLock {
                callCount += 1
                return self.action
            }
            action(self)  // outside the lock: it may call back into this observer
        }
    }

    func testObserverMayRemoveItselfTheKeysLastObserverDuringTheCall() {
        let registry = KeyedObserverRegistry()
        let quitter = Reentrant(registry)
        quitter.onAlpha = { me in XCTAssertTrue(me.registry.removeObserver(me, key: "K")) }
        registry.addObserver(quitter, key: "K")
        sendAlpha(registry, "K", 1)
        XCTAssertEqual(registry.lists.keyCount, 0, "freed while it was being called")
        sendAlpha(registry, "K", 2)
        XCTAssertEqual(quitter.calls, 1)
    }

    func testObserverAddedDuringTheCallIsNotCalledByItButByTheNextOne() {
        let registry = KeyedObserverRegistry()
        let adder = Reentrant(registry)
        let added = AlphaOnly("added")
        adder.onAlpha = { me in
            me.registry.addObserver(added, key: "K")
            me.registry.removeObserver(me, key: "K")
            me.registry.addObserver(me, key: "K")
        }
        registry.addObserver(adder, key: "K")
        sendAlpha(registry, "K", 1)
        XCTAssertEqual(added.recorded, [])
        XCTAssertEqual(adder.calls, 1)
        adder.onAlpha = { _ in }
        sendAlpha(registry, "K", 2)
        XCTAssertEqual(added.recorded, ["alpha 2"])
        XCTAssertEqual(adder.calls, 2)
    }

    func testObserverMayCallWithKeyedObserversAgainAndUseANewProtocol() {
        let registry = KeyedObserverRegistry()
        let nester = Reentrant(registry)
        let both = AlphaAndBeta("both")
        nester.onAlpha = { me in
            me.registry.withKeyedObservers(key: "inner") { (_, observer: BetaObserver) in observer.beta(9) }
            me.registry.withKeyedObservers(key: "inner") { (_, observer: LooseObserver) in observer.loose(8) }
        }
        registry.addObserver(nester, key: "outer")
        registry.addObserver(both, key: "inner")
        sendAlpha(registry, "outer", 1)
        XCTAssertEqual(nester.calls, 1)
        XCTAssertEqual(both.recorded, ["beta 9", "loose 8"])
    }

    // MARK: Deliveries

    func testQueueDeliveryRunsOnTheObserversQueueWithTheKey() {
        let registry = KeyedObserverRegistry()
        let queue = DispatchQueue(label: "keyed.delivery")
        let specificKey = DispatchSpecificKey<Int>()
        queue.setSpecific(key: specificKey, value: 42)
        let onQueue = AlphaOnly("on queue")
        let inline = AlphaOnly("inline")
        registry.addObserver(onQueue, key: "K", delivery: .queue(queue))
        registry.addObserver(inline, key: "K")
        let seen = Locked<[String]>([])
        for value in 1...3 {
            registry.withObservers(forKey: "K") { (key, observer: AlphaObserver) in
                if observer === onQueue {
                    let specific = DispatchQueue.getSpecific(key: specificKey)
                    seen.withLock { $0.append("\(key) \(specific ?? 0)") }
                }
                observer.alpha(value)
            }
        }
        queue.sync {}
        XCTAssertEqual(seen.withLock { $0 }, ["K 42", "K 42", "K 42"])
        XCTAssertEqual(onQueue.recorded, ["alpha 1", "alpha 2", "alpha 3"])
        XCTAssertEqual(inline.recorded, ["alpha 1", "alpha 2", "alpha 3"])
    }

    func testQueuedDeliveryToAnObserverDeallocatedMeanwhileIsDropped() {
        let registry = KeyedObserverRegistry()
        let queue = DispatchQueue(label: "keyed.delivery.dead")
        let ledger = LivenessLedger()
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        do {
            let transient = TransientAlpha(ledger)
            registry.addObserver(transient, key: 1, delivery: .queue(queue))
            registry.withObservers(forKey: 1) { (_, observer: AlphaObserver) in observer.alpha(1) }
        }
        gate.signal()
        queue.sync {}
        XCTAssertEqual(ledger.calls.load(ordering: .relaxed), 0)
        XCTAssertEqual(ledger.callsOnDead.load(ordering: .relaxed), 0)
    }

    // MARK: Concurrency

    func testAddAndRemoveAreNotBlockedByARunningWithKeyedObservers() {
        let registry = KeyedObserverRegistry()
        let blocker = Reentrant(registry)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        blocker.onAlpha = { _ in
            entered.signal()
            _ = release.wait(timeout: .now() + 60)
        }
        registry.addObserver(blocker, key: "K")
        let sender = UncheckedBox(registry)
        let done = DispatchSemaphore(value: 0)
        Thread {
            sender.value.withKeyedObservers(key: "K") { (_, observer: AlphaObserver) in observer.alpha(1) }
            done.signal()
        }.start()
        entered.wait()
        // The call is parked inside the callback on the other thread: every
        // writer proceeds, even one freeing the key being called.
        let newcomer = AlphaOnly("newcomer")
        XCTAssertTrue(registry.addObserver(newcomer, key: "K").isActive)
        XCTAssertTrue(registry.removeObserver(newcomer, key: "K"))
        XCTAssertTrue(registry.addObserver(newcomer, key: "other").isActive)
        XCTAssertTrue(registry.removeObserver(blocker, key: "K"))
        XCTAssertEqual(registry.keyCount, 1, "K was freed while being called")
        XCTAssertTrue(registry.addObserver(newcomer, key: "K").isActive)
        sendAlpha(registry, "K", 2)
        release.signal()
        done.wait()
        XCTAssertEqual(newcomer.recorded, ["alpha 2"])
        XCTAssertEqual(blocker.calls, 1)
    }

    func testStableObserversAreCalledExactlyOncePerCallWhileOthersChurnOnOtherThreads() {
        let registry = KeyedObserverRegistry()
        let stableA = (0..<8).map { AlphaOnly("A\($0)") }
        let stableB = (0..<8).map { AlphaOnly("B\($0)") }
        let stableBoth = AlphaOnly("both")
        registry.addKeyedObserver(key: "A", stableA)
        registry.addKeyedObserver(key: "B", stableB)
        registry.addKeyedObserver(keys: ["A", "B"], stableBoth)
        let ledger = LivenessLedger()
        let sends = 2_000
        let senders = 2
        let running = HeapAtomicWord<Int>(senders)
        // Each churn thread signals once it has added its first observer, and
        // each sender waits for one signal: the sends overlap the churn.
        let churnStarted = DispatchSemaphore(value: 0)
        let box = UncheckedBox(registry)
        runOnThreads(senders + 2) { index in
            let registry = box.value
            if index < senders {
                let key = index == 0 ? "A" : "B"
                XCTAssertEqual(churnStarted.wait(timeout: .now() + 10), .success, "the churn threads did not start")
                for value in 0..<sends {
                    registry.withKeyedObservers(key: key) { (_, observer: AlphaObserver) in observer.alpha(value) }
                    // A key that is created and freed over and over meanwhile.
                    registry.withKeyedObservers(key: "churn") { (_, observer: AlphaObserver) in observer.alpha(value) }
                }
                running.wrappingSubtract(1, ordering: .releasing)
            } else {
                // Churn: transient observers on the stable keys and on a key
                // of their own; some removed, the rest dropped (deallocated
                // while sends run).
                var kept: [TransientAlpha] = []
                var round = 0
                while running.load(ordering: .acquiring) > 0 {
                    let transient = TransientAlpha(ledger)
                    registry.addKeyedObserver(keys: ["A", "B", "churn"], transient)
                    if round == 0 && kept.isEmpty { churnStarted.signal() }
                    kept.append(transient)
                    if kept.count == 8 {
                        registry.removeKeyedObserver(keys: ["A", "B"], Array(kept[0..<4]) as [AnyObject])
                        if round % 2 == 0 { registry.removeAllObservers(key: "churn") }
                        kept.removeAll()
                        round += 1
                    }
                }
            }
        }
        for observer in stableA + stableB {
            XCTAssertEqual(observer.callCount, sends, observer.name)
        }
        XCTAssertEqual(stableBoth.callCount, sends * senders)
        XCTAssertGreaterThan(ledger.calls.load(ordering: .relaxed), 0)
        XCTAssertEqual(ledger.callsOnDead.load(ordering: .relaxed), 0, "a deallocated observer was called")
        XCTAssertEqual(registry.observerCount(forKey: "A"), 9)
        XCTAssertEqual(registry.observerCount(forKey: "B"), 9)
        XCTAssertEqual(registry.keyCount, 2, "churn's observers are all gone: the key is freed")
    }

    func testConcurrentFirstUsesOfAProtocolOnAKeyEachCallEveryObserver() {
        for _ in 0..<30 {
            let registry = KeyedObserverRegistry()
            let observers = (0..<64).map { AlphaOnly("observer \($0)") }
            registry.addKeyedObserver(key: "K", observers)
            let box = UncheckedBox(registry)
            runOnThreads(2) { _ in
                box.value.withKeyedObservers(key: "K") { (_, observer: AlphaObserver) in observer.alpha(0) }
            }
            for observer in observers { XCTAssertEqual(observer.callCount, 2, observer.name) }
        }
    }

    func testObserversReleasedOnAnotherThreadDuringSendsAreNeverCalledDead() {
        let registry = KeyedObserverRegistry()
        let ledger = LivenessLedger()
        let handOff = Locked<[TransientAlpha]>([])
        let running = HeapAtomicWord<Bool>(true)
        let box = UncheckedBox(registry)
        runOnThreads(3) { index in
            let registry = box.value
            switch index {
            case 0:
                for value in 0..<3_000 {
                    registry.withKeyedObservers(key: value % 3) { (_, observer: AlphaObserver) in observer.alpha(value)
                    }
                }
                running.store(false, ordering: .releasing)
            case 1:
                var key = 0
                while running.load(ordering: .acquiring) {
                    let transient = TransientAlpha(ledger)
                    registry.addObserver(transient, key: key % 3)
                    key += 1
                    handOff.withLock { $0.append(transient) }
                }
            default:
                // Drops the last strong references, racing the sends.
                while running.load(ordering: .acquiring) {
                    handOff.withLock { $0.removeAll() }
                }
            }
        }
        handOff.withLock { $0.removeAll() }
        for key in 0..<3 { sendAlpha(registry, key, -1) }
        XCTAssertEqual(ledger.callsOnDead.load(ordering: .relaxed), 0)
        XCTAssertEqual(registry.keyCount, 0)
    }
}
