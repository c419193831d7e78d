import Dispatch
import Foundation
import ObserverSwiftCompat  // Flowduino's array forms: addObserver([a, b]), removeObserver([a, b])
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

final class ObserverRegistryTests: XCTestCase {

    // MARK: Exactness

    func testWithObserversCallsExactlyTheObserversConformingToTheClosuresParameterType() {
        let registry = ObserverRegistry()
        let alpha = AlphaOnly("alpha")
        let beta = BetaOnly("beta")
        let both = AlphaAndBeta("both")
        let neither = Neither("neither")
        registry.addObserver([alpha, beta, both, neither])

        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(alpha.recorded, ["alpha 1"])
        XCTAssertEqual(beta.recorded, [])
        XCTAssertEqual(both.recorded, ["alpha 1"])
        XCTAssertEqual(neither.recorded, [])

        registry.withObservers { (observer: BetaObserver) in observer.beta(2) }
        XCTAssertEqual(alpha.recorded, ["alpha 1"])
        XCTAssertEqual(beta.recorded, ["beta 2"])
        XCTAssertEqual(both.recorded, ["alpha 1", "beta 2"])
        XCTAssertEqual(neither.recorded, [])
    }

    func testOtherParameterTypesCompositionsClassesAnyObjectAndNonClassProtocols() {
        let registry = ObserverRegistry()
        let alpha = AlphaOnly("alpha")
        let both = AlphaAndBeta("both")
        let neither = Neither("neither")
        registry.addObserver([alpha, both, neither])

        var composition: [String] = []
        registry.withObserversHere { (observer: AlphaObserver & BetaObserver) in
            composition.append((observer as! RecordingObserver).name)
        }
        XCTAssertEqual(composition, ["both"])

        var everyone: [String] = []
        registry.withObserversHere { (observer: AnyObject) in
            everyone.append((observer as! RecordingObserver).name)
        }
        XCTAssertEqual(Set(everyone), ["alpha", "both", "neither"])
        XCTAssertEqual(everyone.count, 3)

        var recordingClass: [String] = []
        registry.withObserversHere { (observer: RecordingObserver) in recordingClass.append(observer.name) }
        XCTAssertEqual(Set(recordingClass), ["alpha", "both", "neither"])

        var exactClass: [String] = []
        registry.withObserversHere { (observer: AlphaAndBeta) in exactClass.append(observer.name) }
        XCTAssertEqual(exactClass, ["both"])

        // A protocol that is not class-bound (an opaque existential).
        registry.withObservers { (observer: LooseObserver) in observer.loose(7) }
        XCTAssertEqual(both.recorded, ["loose 7"])
        XCTAssertEqual(alpha.recorded, [])

        // A type no observer can be cast to.
        var strings = 0
        registry.withObserversHere { (_: String) in strings += 1 }
        XCTAssertEqual(strings, 0)
    }

    func testConformanceIsDecidedOnceAndStoredPerObserverAndProtocol() {
        let registry = ObserverRegistry()
        let alpha = AlphaOnly("alpha")
        let beta = BetaOnly("beta")
        let both = AlphaAndBeta("both")
        registry.addObserver([alpha, beta, both])
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(0) }

        // The view for AlphaObserver holds exactly the two conforming
        // observers, each with its cast stored (no `as?` on the send path).
        let view = registry.view(for: (any AlphaObserver).self)
        var stored: [ObjectIdentifier] = []
        view.slots.forEachBox { box in
            let conforming = box as! ConformingObserver<any AlphaObserver>
            XCTAssertTrue(conforming.hasStoredCast)
            stored.append(conforming.identifier)
        }
        XCTAssertEqual(Set(stored), [ObjectIdentifier(alpha), ObjectIdentifier(both)])

        // An observer added later is recorded by the add and cast once, into
        // every existing view, by the next withObservers (of any protocol).
        let late = AlphaOnly("late")
        registry.addObserver(late)
        XCTAssertEqual(view.slots.storedCount, 2, "the add itself casts nothing")
        XCTAssertEqual(registry.observerCount, 4)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(view.slots.storedCount, 3)
        XCTAssertEqual(late.recorded, ["alpha 1"])
        XCTAssertEqual(beta.recorded, [])

        // Views are found again, not rebuilt.
        XCTAssertTrue(registry.view(for: (any AlphaObserver).self) === view)
        // Opaque existentials and compositions are stored too.
        registry.withObservers { (_: LooseObserver) in }
        registry.withObservers { (_: AlphaObserver & BetaObserver) in }
        registry.view(for: (any LooseObserver).self).slots.forEachBox { box in
            XCTAssertTrue((box as! ConformingObserver<any LooseObserver>).hasStoredCast)
        }
        registry.view(for: (any AlphaObserver & BetaObserver).self).slots.forEachBox { box in
            XCTAssertTrue((box as! ConformingObserver<any AlphaObserver & BetaObserver>).hasStoredCast)
        }
        withExtendedLifetime([alpha, beta, both, late]) {}
    }

    func testCastsThatCannotBeStoredFallBackToACastPerCall() {
        // `as? Int` on an NSNumber bridges to a new Int value: its bytes
        // are not the observer's reference, so the box keeps no stored cast
        // and casts on every call instead. (NSNumber, not NSString: an
        // observer must be Sendable, and NSString is not.)
        let registry = ObserverRegistry()
        let number = NSNumber(value: 7)
        let plain = AlphaOnly("plain")
        registry.addObserver([number, plain])
        var seen: [Int] = []
        registry.withObserversHere { (observer: Int) in seen.append(observer) }
        registry.withObserversHere { (observer: Int) in seen.append(observer) }
        XCTAssertEqual(seen, [7, 7])
        var boxes = 0
        registry.view(for: Int.self).slots.forEachBox { box in
            boxes += 1
            XCTAssertFalse((box as! ConformingObserver<Int>).hasStoredCast)
        }
        XCTAssertEqual(boxes, 1)
    }

    func testAnyHashableCastIsStoredWhenItHoldsOnlyTheObserver() {
        final class HashableObserver: Hashable, Sendable {
            let id: Int
            init(_ id: Int) { self.id = id }
            static func == (lhs: HashableObserver, rhs: HashableObserver) -> Bool { lhs.id == rhs.id }
            func hash(into hasher: inout Hasher) { hasher.combine(id) }
        }
        let registry = ObserverRegistry()
        let hashable = HashableObserver(7)
        let plain = AlphaOnly("plain")
        registry.addObserver([hashable, plain])
        var seen: [AnyHashable] = []
        registry.withObserversHere { (observer: AnyHashable) in seen.append(observer) }
        registry.withObserversHere { (observer: AnyHashable) in seen.append(observer) }
        XCTAssertEqual(seen, [AnyHashable(hashable), AnyHashable(hashable)])
    }

    // MARK: Adding and removing

    func testAddingTwiceIsANoOpAndRemovingUnknownObserversIsANoOp() {
        let registry = ObserverRegistry()
        let alpha = AlphaOnly("alpha")
        let stranger = AlphaOnly("stranger")
        XCTAssertTrue(registry.addObserver(alpha).isActive)
        XCTAssertFalse(registry.addObserver(alpha).isActive)
        XCTAssertEqual(registry.addObserver([alpha, alpha]), 0)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(alpha.recorded, ["alpha 1"])

        XCTAssertFalse(registry.removeObserver(stranger))
        XCTAssertTrue(registry.removeObserver(alpha))
        XCTAssertFalse(registry.removeObserver(alpha))
        XCTAssertEqual(registry.observerCount, 0)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(2) }
        XCTAssertEqual(alpha.recorded, ["alpha 1"])
    }

    func testAddAndRemoveArraysOfMixedObservers() {
        let registry = ObserverRegistry()
        let alpha = AlphaOnly("alpha")
        let beta = BetaOnly("beta")
        let both = AlphaAndBeta("both")
        XCTAssertEqual(registry.addObserver([alpha, beta, both]), 3)
        XCTAssertEqual(registry.observerCount, 3)
        XCTAssertTrue(registry.contains(beta))
        XCTAssertEqual(registry.removeObserver([alpha, both, AlphaOnly("stranger")]), 2)
        XCTAssertEqual(registry.observerCount, 1)
        XCTAssertFalse(registry.contains(alpha))
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        registry.withObservers { (observer: BetaObserver) in observer.beta(2) }
        XCTAssertEqual(alpha.recorded, [])
        XCTAssertEqual(both.recorded, [])
        XCTAssertEqual(beta.recorded, ["beta 2"])
        XCTAssertEqual(registry.removeAllObservers(), 1)
        registry.withObservers { (observer: BetaObserver) in observer.beta(3) }
        XCTAssertEqual(beta.recorded, ["beta 2"])
    }

    /// An observer stored in three views (its first handle kept inline, the
    /// others beside it) is removed from each.
    func testObserverStoredInSeveralViewsIsRemovedFromEveryOne() {
        let registry = ObserverRegistry()
        let both = AlphaAndBeta("both")
        registry.addObserver(both)
        var anyCalls = 0
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        registry.withObservers { (observer: BetaObserver) in observer.beta(2) }
        registry.withObserversHere { (_: AnyObject) in anyCalls += 1 }
        XCTAssertTrue(registry.removeObserver(both))
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(3) }
        registry.withObservers { (observer: BetaObserver) in observer.beta(4) }
        registry.withObserversHere { (_: AnyObject) in anyCalls += 1 }
        XCTAssertEqual(both.recorded, ["alpha 1", "beta 2"])
        XCTAssertEqual(anyCalls, 1)
        registry.addObserver(both)
        registry.withObservers { (observer: BetaObserver) in observer.beta(5) }
        registry.withObserversHere { (_: AnyObject) in anyCalls += 1 }
        XCTAssertEqual(both.recorded, ["alpha 1", "beta 2", "beta 5"])
        XCTAssertEqual(anyCalls, 2)
    }

    func testRemovedObserverCanBeAddedAgainAndIsCastAgain() {
        let registry = ObserverRegistry()
        let both = AlphaAndBeta("both")
        registry.addObserver(both)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        registry.removeObserver(both)
        registry.addObserver(both)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(2) }
        registry.withObservers { (observer: BetaObserver) in observer.beta(3) }
        XCTAssertEqual(both.recorded, ["alpha 1", "alpha 2", "beta 3"])
    }

    // MARK: Weak references

    func testObserversAreHeldWeaklyAndDeadOnesAreNeverCalledAndAreReclaimed() throws {
        let registry = ObserverRegistry()
        let ledger = LivenessLedger()
        let keeper = AlphaOnly("keeper")
        registry.addObserver(keeper)
        weak var weakTransient: TransientAlpha?
        do {
            let transient = TransientAlpha(ledger)
            weakTransient = transient
            registry.addObserver(transient)
            registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
            XCTAssertEqual(ledger.calls.load(ordering: .relaxed), 1)
        }
        XCTAssertNil(weakTransient, "the registry must not retain observers")
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(2) }
        XCTAssertEqual(ledger.calls.load(ordering: .relaxed), 1)
        XCTAssertEqual(ledger.callsOnDead.load(ordering: .relaxed), 0)
        XCTAssertEqual(keeper.recorded, ["alpha 1", "alpha 2"])

        // The dead observer left the view (expired by the send) and the
        // registry (next writer).
        XCTAssertEqual(registry.observerCount, 1)
        XCTAssertEqual(registry.view(for: (any AlphaObserver).self).slots.storedCount, 1)
        XCTAssertEqual(registry.storedCount, 1)
    }

    func testObserverDeallocatedBeforeItsProtocolIsFirstUsedIsSkipped() {
        let registry = ObserverRegistry()
        do {
            let transient = AlphaOnly("transient")
            registry.addObserver(transient)
        }
        var calls = 0
        registry.withObserversHere { (_: AlphaObserver) in calls += 1 }
        XCTAssertEqual(calls, 0)
        XCTAssertEqual(registry.observerCount, 0)
    }

    // MARK: Reentrancy

    final class Reentrant: AlphaObserver, @unchecked Sendable {
        // @unchecked: `action` and `callCount` are only touched while `lock` is held.
        let registry: ObserverRegistry
        private let lock = NSLock()
        private var action: @Sendable (Reentrant) -> Void = { _ in }
        private var callCount = 0
        init(_ registry: ObserverRegistry) { self.registry = registry }
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

    func testObserverMayRemoveItselfAndOthersDuringTheCall() {
        let registry = ObserverRegistry()
        let first = Reentrant(registry)
        let second = Reentrant(registry)
        registry.addObserver([first, second])
        // Weak: each handler is stored in the other observer, so strong
        // captures would make a cycle that outlives the test.
        first.onAlpha = { [weak second] me in
            me.registry.removeObserver(me)
            if let second { me.registry.removeObserver(second) }
        }
        second.onAlpha = { [weak first] me in
            if let first { me.registry.removeObserver(first) }
        }
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        // Whichever ran first removed the other or not: each ran at most once.
        XCTAssertLessThanOrEqual(first.calls + second.calls, 2)
        XCTAssertGreaterThanOrEqual(first.calls + second.calls, 1)
        let before = first.calls + second.calls
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(2) }
        XCTAssertEqual(first.calls + second.calls, before, "removed observers are skipped by later calls")
        XCTAssertEqual(registry.observerCount, 0)
    }

    func testObserverAddedDuringTheCallIsNotCalledByItButByTheNextOne() {
        let registry = ObserverRegistry()
        let adder = Reentrant(registry)
        let added = AlphaOnly("added")
        adder.onAlpha = { me in me.registry.addObserver(added) }
        registry.addObserver(adder)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(added.recorded, [])
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(2) }
        XCTAssertEqual(added.recorded, ["alpha 2"])
    }

    func testObserverMayCallWithObserversAgain() {
        let registry = ObserverRegistry()
        let nester = Reentrant(registry)
        let beta = BetaOnly("beta")
        nester.onAlpha = { me in
            me.registry.withObservers { (observer: BetaObserver) in observer.beta(9) }
        }
        registry.addObserver([nester, beta])
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(nester.calls, 1)
        XCTAssertEqual(beta.recorded, ["beta 9"])
    }

    func testFirstUseOfAProtocolFromInsideACallbackBuildsItsView() {
        let registry = ObserverRegistry()
        let nester = Reentrant(registry)
        let both = AlphaAndBeta("both")
        let inner = AtomicCounter()
        nester.onAlpha = { me in
            me.registry.withObservers { (_: LooseObserver) in inner.increment() }
        }
        registry.addObserver([nester, both])
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(inner.value, 1)
    }

    // MARK: Deliveries

    func testQueueDeliveryRunsOnTheObserversQueue() {
        let registry = ObserverRegistry()
        let queue = DispatchQueue(label: "registry.delivery")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 42)
        let onQueue = AlphaOnly("on queue")
        let inline = AlphaOnly("inline")
        registry.addObserver(onQueue, delivery: .queue(queue))
        registry.addObserver(inline)
        let seenOnQueue = Locked<[Int?]>([])
        for value in 1...3 {
            registry.withObservers { (observer: AlphaObserver) in
                let specific = DispatchQueue.getSpecific(key: key)
                if observer === onQueue { seenOnQueue.withLock { $0.append(specific) } }
                observer.alpha(value)
            }
        }
        queue.sync {}
        XCTAssertEqual(seenOnQueue.withLock { $0 }, [42, 42, 42])
        XCTAssertEqual(onQueue.recorded, ["alpha 1", "alpha 2", "alpha 3"])
        XCTAssertEqual(inline.recorded, ["alpha 1", "alpha 2", "alpha 3"])
    }

    func testQueuedDeliveryToAnObserverDeallocatedMeanwhileIsDropped() {
        let registry = ObserverRegistry()
        let queue = DispatchQueue(label: "registry.delivery.dead")
        let ledger = LivenessLedger()
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        do {
            let transient = TransientAlpha(ledger)
            registry.addObserver(transient, delivery: .queue(queue))
            registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        }
        gate.signal()
        queue.sync {}
        XCTAssertEqual(ledger.calls.load(ordering: .relaxed), 0)
        XCTAssertEqual(ledger.callsOnDead.load(ordering: .relaxed), 0)
    }

    func testQueuedDeliveryOutlivingItsRegistryAndObserverIsDroppedSafely() {
        let queue = DispatchQueue(label: "registry.delivery.orphan")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let ledger = LivenessLedger()
        var observer: TransientAlpha? = TransientAlpha(ledger)
        do {
            let registry = ObserverRegistry()
            registry.addObserver(observer!, delivery: .queue(queue))
            registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        }
        observer = nil  // the registry and the observer are both gone
        gate.signal()
        queue.sync {}
        XCTAssertNil(observer)
        XCTAssertEqual(ledger.calls.load(ordering: .relaxed), 0)
        XCTAssertEqual(ledger.callsOnDead.load(ordering: .relaxed), 0)
    }

    func testMainActorDeliveryRunsOnTheMainThread() {
        let registry = ObserverRegistry()
        let observer = AlphaOnly("main")
        registry.addObserver(observer, delivery: .queue(.main))
        let delivered = expectation(description: "delivered on the main thread")
        let sender = Thread {
            registry.withObservers { (observer: AlphaObserver) in
                XCTAssertTrue(Thread.isMainThread)
                observer.alpha(5)
                delivered.fulfill()
            }
        }
        sender.start()
        waitUntilFulfilled([delivered], timeout: 30)
        XCTAssertEqual(observer.recorded, ["alpha 5"])
    }

    // MARK: Concurrency

    func testAddAndRemoveAreNotBlockedByARunningWithObservers() {
        let registry = ObserverRegistry()
        let blocker = Reentrant(registry)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        blocker.onAlpha = { _ in
            entered.signal()
            _ = release.wait(timeout: .now() + 60)
        }
        registry.addObserver(blocker)
        let sender = UncheckedBox(registry)
        let done = DispatchSemaphore(value: 0)
        Thread {
            sender.value.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
            done.signal()
        }.start()
        entered.wait()
        // withObservers is now parked inside the callback on the other
        // thread: writers and other sends proceed.
        let newcomer = AlphaOnly("newcomer")
        XCTAssertTrue(registry.addObserver(newcomer).isActive)
        XCTAssertTrue(registry.removeObserver(newcomer))
        XCTAssertTrue(registry.addObserver(newcomer).isActive)
        registry.withObservers { (observer: BetaObserver) in observer.beta(1) }
        XCTAssertEqual(registry.observerCount, 2)
        release.signal()
        done.wait()
        XCTAssertEqual(newcomer.recorded, [], "added during that call: not called by it")
    }

    func testStableObserversAreCalledExactlyOncePerCallWhileOthersChurnOnOtherThreads() {
        let registry = ObserverRegistry()
        let stable = (0..<64).map { AlphaOnly("stable \($0)") }
        registry.addObserver(stable)
        let ledger = LivenessLedger()
        let sends = 2_000
        let senders = 2
        let running = HeapAtomicWord<Int>(senders)
        let box = UncheckedBox(registry)

        runOnThreads(senders + 2) { index in
            let registry = box.value
            if index < senders {
                for value in 0..<sends {
                    registry.withObservers { (observer: AlphaObserver) in observer.alpha(value) }
                }
                running.wrappingSubtract(1, ordering: .releasing)
            } else {
                // Churn: add transient observers, remove some, drop the rest
                // (deallocated while sends run), until the senders finish.
                var kept: [TransientAlpha] = []
                while running.load(ordering: .acquiring) > 0 {
                    let transient = TransientAlpha(ledger)
                    registry.addObserver(transient)
                    kept.append(transient)
                    if kept.count == 8 {
                        registry.removeObserver(Array(kept[0..<4]) as [AnyObject])
                        kept.removeAll()
                    }
                }
            }
        }
        for observer in stable {
            XCTAssertEqual(observer.callCount, sends * senders, observer.name)
        }
        XCTAssertGreaterThan(ledger.calls.load(ordering: .relaxed), 0)
        XCTAssertEqual(ledger.callsOnDead.load(ordering: .relaxed), 0, "a deallocated observer was called")
        XCTAssertEqual(registry.observerCount, stable.count)
    }

    func testConcurrentFirstUsesOfAProtocolEachCallEveryObserver() {
        // The first withObservers for a protocol builds its view; another
        // thread's first call must not see it half-built.
        for _ in 0..<50 {
            let registry = ObserverRegistry()
            let observers = (0..<64).map { AlphaOnly("observer \($0)") }
            registry.addObserver(observers)
            let box = UncheckedBox(registry)
            runOnThreads(2) { _ in
                box.value.withObservers { (observer: AlphaObserver) in observer.alpha(0) }
            }
            for observer in observers { XCTAssertEqual(observer.callCount, 2, observer.name) }
        }
    }

    func testObserversReleasedOnAnotherThreadDuringSendsAreNeverCalledDead() {
        let registry = ObserverRegistry()
        let ledger = LivenessLedger()
        let handOff = Locked<[TransientAlpha]>([])
        let running = HeapAtomicWord<Bool>(true)
        let box = UncheckedBox(registry)
        runOnThreads(3) { index in
            let registry = box.value
            switch index {
            case 0:
                for value in 0..<3_000 {
                    registry.withObservers { (observer: AlphaObserver) in observer.alpha(value) }
                }
                running.store(false, ordering: .releasing)
            case 1:
                while running.load(ordering: .acquiring) {
                    let transient = TransientAlpha(ledger)
                    registry.addObserver(transient)
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
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(-1) }
        XCTAssertEqual(ledger.callsOnDead.load(ordering: .relaxed), 0)
        XCTAssertEqual(registry.observerCount, 0)
    }
}

/// Adds are recorded and stored in the protocol lists by the next
/// `withObservers`: what that changes and what it must not.
final class ObserverRegistryDeferredAddTests: XCTestCase {
    func testAnAddThenRemoveBeforeAnySendLeavesNothingBehind() {
        let registry = ObserverRegistry()
        let kept = AlphaOnly("kept")
        registry.addObserver(kept)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(0) }
        let view = registry.view(for: (any AlphaObserver).self)
        for _ in 0..<1_000 {
            let passing = AlphaOnly("passing")
            XCTAssertTrue(registry.addObserver(passing).isActive)
            XCTAssertFalse(registry.addObserver(passing).isActive, "a second add is still a no-op")
            XCTAssertTrue(registry.contains(passing))
            XCTAssertTrue(registry.removeObserver(passing))
            XCTAssertFalse(registry.contains(passing))
        }
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(kept.recorded, ["alpha 0", "alpha 1"])
        XCTAssertEqual(view.slots.storedCount, 1)
        XCTAssertEqual(registry.storedCount, 1)
        XCTAssertEqual(registry.observerCount, 1)
    }

    func testObserversAddedInAnyOrderWithRemovalsBetweenAreAllCalled() {
        let registry = ObserverRegistry()
        let observers = (0..<50).map { AlphaOnly("\($0)") }
        for observer in observers { registry.addObserver(observer) }
        // Remove every third one while pending (exercises the moves).
        for (index, observer) in observers.enumerated() where index % 3 == 0 {
            XCTAssertTrue(registry.removeObserver(observer))
        }
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(7) }
        for (index, observer) in observers.enumerated() {
            XCTAssertEqual(observer.recorded, index % 3 == 0 ? [] : ["alpha 7"], "observer \(index)")
        }
        XCTAssertEqual(registry.observerCount, 50 - 17)
    }

    func testAnObserverDeallocatedWhilePendingIsNeverCalledAndIsDropped() {
        let registry = ObserverRegistry()
        let keeper = AlphaOnly("keeper")
        registry.addObserver(keeper)
        weak var weakTransient: AlphaOnly?
        do {
            let transient = AlphaOnly("transient")
            weakTransient = transient
            registry.addObserver(transient)
        }
        XCTAssertNil(weakTransient)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(3) }
        XCTAssertEqual(keeper.recorded, ["alpha 3"])
        XCTAssertEqual(registry.observerCount, 1)
        XCTAssertEqual(registry.storedCount, 1)
    }

    func testAnAddOnOneThreadIsSeenByASendThatStartsAfterItOnAnother() {
        let registry = ObserverRegistry()
        for round in 0..<200 {
            let observer = AlphaOnly("\(round)")
            let added = DispatchSemaphore(value: 0)
            let sent = DispatchSemaphore(value: 0)
            spawnThread {
                registry.addObserver(observer)
                added.signal()
            }.wait()
            added.wait()
            spawnThread {
                registry.withObservers { (observer: AlphaObserver) in observer.alpha(round) }
                sent.signal()
            }.wait()
            sent.wait()
            XCTAssertEqual(observer.recorded, ["alpha \(round)"])
            registry.removeObserver(observer)
        }
    }

    func testRemoveAllDropsPendingAndStoredObservers() {
        let registry = ObserverRegistry()
        let stored = AlphaOnly("stored")
        registry.addObserver(stored)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        let pending = AlphaOnly("pending")
        registry.addObserver(pending)
        XCTAssertEqual(registry.removeAllObservers(), 2)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(2) }
        XCTAssertEqual(stored.recorded, ["alpha 1"])
        XCTAssertEqual(pending.recorded, [])
        XCTAssertEqual(registry.observerCount, 0)
        XCTAssertTrue(registry.addObserver(pending).isActive, "can be added again")
    }

    func testConcurrentAddsRemovesAndSendsDeliverExactlyToTheRegistered() {
        let registry = ObserverRegistry()
        let stable = (0..<16).map { AlphaOnly("stable \($0)") }
        for observer in stable { registry.addObserver(observer) }
        let stop = HeapAtomicWord<Bool>(false)
        let churners = (0..<2).map { _ in
            spawnThread {
                while !stop.load(ordering: .relaxed) {
                    let passing = AlphaOnly("passing")
                    registry.addObserver(passing)
                    registry.removeObserver(passing)
                }
            }
        }
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for value in 0..<300 { registry.withObservers { (observer: AlphaObserver) in observer.alpha(value) } }
        }
        stop.store(true, ordering: .relaxed)
        churners.forEach { $0.wait() }
        for observer in stable { XCTAssertEqual(observer.recorded.count, 600) }
        XCTAssertEqual(registry.observerCount, 16)
    }
}
