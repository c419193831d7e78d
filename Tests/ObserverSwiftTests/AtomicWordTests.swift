import Foundation
import ObserverEngine
import XCTest

@testable import ObserverSwift

private protocol WordsPinged: AnyObject { func pinged() }

/// A host keeping its words first, as the engine's owners do.
private final class WordsHost: @unchecked Sendable {
    struct Words {
        var flag = AtomicWordStorage<Bool>(false)
        var index = AtomicWordStorage<UInt32>(7)
        var sequence = AtomicWordStorage<UInt64>(0)
        var count = AtomicWordStorage<Int>(-1)

        // A byte, padding to the 4-byte word, then two 8-byte words.
        static let flagOffset = 0
        static let indexOffset = MemoryLayout<UInt32>.alignment
        static let sequenceOffset = MemoryLayout<UInt64>.alignment
        static let countOffset = sequenceOffset + MemoryLayout<UInt64>.stride
    }
    var words = Words()
    let trailing = "after the words"

    var flag: AtomicWord<Bool> { AtomicWords.word(self, at: Words.flagOffset) }
    var index: AtomicWord<UInt32> { AtomicWords.word(self, at: Words.indexOffset) }
    var sequence: AtomicWord<UInt64> { AtomicWords.word(self, at: Words.sequenceOffset) }
    var count: AtomicWord<Int> { AtomicWords.word(self, at: Words.countOffset) }
}

final class AtomicWordTests: XCTestCase {
    func testOperationsHaveTheStandardAtomicsSemantics() {
        let host = WordsHost()
        XCTAssertEqual(host.count.load(ordering: .relaxed), -1, "the view reads the value init stored")
        XCTAssertEqual(host.index.load(ordering: .acquiring), 7)
        XCTAssertFalse(host.flag.load(ordering: .sequentiallyConsistent))

        XCTAssertFalse(host.flag.exchange(true, ordering: .acquiringAndReleasing))
        XCTAssertTrue(host.flag.exchange(true, ordering: .sequentiallyConsistent), "exchange returns the old value")

        var result = host.sequence.compareExchange(expected: 1, desired: 5, ordering: .relaxed)
        XCTAssertFalse(result.exchanged)
        XCTAssertEqual(result.original, 0, "a failed compare-exchange reports the value found")
        result = host.sequence.compareExchange(expected: 0, desired: 5, ordering: .releasing)
        XCTAssertTrue(result.exchanged)
        XCTAssertEqual(result.original, 0)
        XCTAssertEqual(host.sequence.load(ordering: .relaxed), 5)

        host.count.store(Int.max, ordering: .releasing)
        let added = host.count.wrappingAdd(1, ordering: .relaxed)
        XCTAssertEqual(added.oldValue, Int.max)
        XCTAssertEqual(added.newValue, Int.min, "wrapping, not trapping")
        XCTAssertEqual(host.count.load(ordering: .relaxed), Int.min)
        let subtracted = host.count.wrappingSubtract(1, ordering: .acquiring)
        XCTAssertEqual(subtracted.newValue, Int.max)
        host.index.store(UInt32.max, ordering: .sequentiallyConsistent)
        XCTAssertEqual(host.index.wrappingAdd(1, ordering: .relaxed).newValue, 0)
    }

    /// Every words struct states its words' offsets as constants; they are
    /// where Swift put the fields.
    func testStatedOffsetsAreTheFieldsOffsets() {
        typealias Host = WordsHost.Words
        XCTAssertEqual(MemoryLayout<Host>.offset(of: \.flag), Host.flagOffset)
        XCTAssertEqual(MemoryLayout<Host>.offset(of: \.index), Host.indexOffset)
        XCTAssertEqual(MemoryLayout<Host>.offset(of: \.sequence), Host.sequenceOffset)
        XCTAssertEqual(MemoryLayout<Host>.offset(of: \.count), Host.countOffset)
        typealias Trigger = TriggerCounter.Words
        XCTAssertEqual(MemoryLayout<Trigger>.offset(of: \.owner), Trigger.ownerOffset)
        XCTAssertEqual(MemoryLayout<Trigger>.offset(of: \.owned), Trigger.ownedOffset)
        XCTAssertEqual(MemoryLayout<Event<Int>.Words>.offset(of: \.triggers), Event<Int>.Words.triggersOffset)
        XCTAssertEqual(MemoryLayout<Event<Int>.Words>.offset(of: \.slots), Event<Int>.Words.slotsOffset)
        // Each sender writes its slot's count line alone: the header (next,
        // base, identities) fills the first line, every count has its own.
        XCTAssertEqual(ContendedCounts.identitiesOffset + ContendedCounts.slotCount * 8, ContendedCounts.lineSize)
        for slot in 0..<ContendedCounts.slotCount {
            XCTAssertEqual(ContendedCounts.countOffset(ofSlot: slot), ContendedCounts.lineSize * (slot + 1))
        }
        XCTAssertEqual(ContendedCounts.byteCount, ContendedCounts.lineSize * (ContendedCounts.slotCount + 1))
        typealias Value = ObservableValueWords
        XCTAssertEqual(MemoryLayout<Value>.offset(of: \.observers), Value.observersOffset)
        XCTAssertEqual(MemoryLayout<Value>.offset(of: \.turn), Value.turnOffset)
        XCTAssertEqual(MemoryLayout<Value>.offset(of: \.current), Value.currentOffset)
        XCTAssertEqual(MemoryLayout<Value>.offset(of: \.readers), Value.readersOffset)
        XCTAssertEqual(MemoryLayout<Value>.offset(of: \.extras), Value.extrasOffset)
        XCTAssertEqual(MemoryLayout<Value>.size, 56, "seven words: an empty ObservableValue<Int> fits 96-byte blocks")
        typealias Extras = ValueExtras.Words
        XCTAssertEqual(MemoryLayout<Extras>.offset(of: \.room), Extras.roomOffset)
        XCTAssertEqual(MemoryLayout<Extras>.offset(of: \.attached), Extras.attachedOffset)
        typealias Room = HandOffLock.WaitingRoom.Words
        XCTAssertEqual(MemoryLayout<Room>.offset(of: \.waiters), Room.waitersOffset)
        XCTAssertEqual(MemoryLayout<Room>.offset(of: \.condition), Room.conditionOffset)
        typealias Lock = RegistryLock.Words
        XCTAssertEqual(MemoryLayout<Lock>.offset(of: \.owner), Lock.ownerOffset)
        XCTAssertEqual(MemoryLayout<Lock>.offset(of: \.room), Lock.roomOffset)
        typealias Registry = ObserverRegistry.Words
        XCTAssertEqual(MemoryLayout<Registry>.offset(of: \.viewHead), Registry.viewHeadOffset)
        XCTAssertEqual(MemoryLayout<Registry>.offset(of: \.hasPendingAdds), Registry.hasPendingAddsOffset)
        typealias Ending = Expiry.Words
        XCTAssertEqual(MemoryLayout<Ending>.offset(of: \.sequence), Ending.sequenceOffset)
        XCTAssertEqual(MemoryLayout<Ending>.offset(of: \.index), Ending.indexOffset)
        XCTAssertEqual(MemoryLayout<Ending>.offset(of: \.expired), Ending.expiredOffset)
        XCTAssertEqual(MemoryLayout<Ending>.offset(of: \.removed), Ending.removedOffset)
        typealias List = SlotListWords
        XCTAssertEqual(MemoryLayout<List>.offset(of: \.needsSweep), List.needsSweepOffset)
        XCTAssertEqual(MemoryLayout<List>.offset(of: \.holdsTargets), List.holdsTargetsOffset)
        XCTAssertEqual(MemoryLayout<List>.offset(of: \.sweepCursor), List.sweepCursorOffset)
        typealias Keyed = KeyedRegistration<Int>.Words
        XCTAssertEqual(MemoryLayout<Keyed>.offset(of: \.ended), Keyed.endedOffset)
        XCTAssertEqual(MemoryLayout<Keyed>.offset(of: \.expired), Keyed.expiredOffset)
    }

    /// The storage invariant: a host's first stored property is where the
    /// views write. If it were not, the plain read-back would differ (or the
    /// trailing property would be overwritten).
    func testViewsWriteTheHostsFirstStoredProperty() {
        let host = WordsHost()
        host.flag.store(true, ordering: .relaxed)
        host.index.store(42, ordering: .relaxed)
        host.sequence.store(0xDEAD_BEEF_CAFE, ordering: .relaxed)
        host.count.store(-12345, ordering: .relaxed)
        XCTAssertTrue(host.words.flag.plainValue)
        XCTAssertEqual(host.words.index.plainValue, 42)
        XCTAssertEqual(host.words.sequence.plainValue, 0xDEAD_BEEF_CAFE)
        XCTAssertEqual(host.words.count.plainValue, -12345)
        XCTAssertEqual(host.trailing, "after the words")
    }

    /// Event keeps its trigger counter's words first.
    func testEventTriggerWordsAreEventsFirstStoredProperty() {
        let event = Event<Int>()
        event.send(1)
        event.send(2)
        XCTAssertEqual(event.triggersCount, 2)
        let words = event.words.triggers
        XCTAssertEqual(words.owned.plainValue, 2, "the counter's views wrote Event.words")
        XCTAssertNotEqual(words.owner.plainValue, 0, "the sending thread took ownership")
    }

    /// A slot list keeps its sweep words first.
    func testSlotListSweepFlagIsTheListsFirstStoredProperty() {
        let event = Event<Int>()
        XCTAssertFalse(event.slots.words.needsSweep.plainValue)
        event.slots.needsSweep.store(true, ordering: .relaxed)
        XCTAssertTrue(event.slots.words.needsSweep.plainValue)
        event.slots.sweepCursor.store(9, ordering: .relaxed)
        XCTAssertEqual(event.slots.words.sweepCursor.plainValue, 9)
        event.slots.sweepCursor.store(0, ordering: .relaxed)
        event.slots.needsSweep.store(false, ordering: .relaxed)
        let token = event.subscribe { _ in }
        XCTAssertEqual(event.subscribersCount, 1, "the list's C pointer, after the word, is intact")
        token.cancel()
    }

    /// A value keeps its words first and the storage's copies right after
    /// them, where `copiesOffset` says, whatever the value's size and
    /// alignment.
    func testObservableValueWordsAndCopiesAreWhereTheViewsLook() {
        let value = ObservableValue("first")
        value.storage.readers.wrappingAdd(3 << 32, ordering: .relaxed)
        XCTAssertEqual(value.words.readers.plainValue, 3 << 32)
        value.storage.readers.wrappingSubtract(3 << 32, ordering: .relaxed)
        value.value = "second"
        XCTAssertEqual(value.words.current.plainValue, 1, "the storage's view wrote ObservableValue.words.current")
        XCTAssertEqual(value.copies.0, "first", "the copies, after the words, are the property")
        XCTAssertEqual(value.copies.1, "second")
        value.acquireTurn(by: 42)
        XCTAssertTrue(value.turn.isHeld(by: 42))
        XCTAssertEqual(value.words.turn.plainValue, 42, "the C claim functions wrote ObservableValue.words.turn")
        value.turn.release()
        XCTAssertEqual(value.words.turn.plainValue, 0)
        XCTAssertNil(value.words.extras.plainValue, "an uncontended set makes no extras")
        XCTAssertEqual(value.triggersCount, 1)
        XCTAssertEqual(value.words.observers.triggers.owned.plainValue, 1, "counted in ObservableValue.words")
        XCTAssertEqual(value.value, "second")

        func checkCopies<Element: Equatable>(_ first: Element, _ second: Element, _ name: String) {
            let value = ObservableValue(first)
            value.value = second
            XCTAssertEqual(value.copies.0, first, name)
            XCTAssertEqual(value.copies.1, second, name)
            XCTAssertEqual(value.storage.writerValue, second, name)
            XCTAssertEqual(value.value, second, name)
        }
        checkCopies(UInt8(1), UInt8(2), "1-byte values")
        checkCopies(Int32(1), Int32(2), "4-byte values")
        checkCopies(SIMD4<Float>(1, 2, 3, 4), SIMD4<Float>(5, 6, 7, 8), "16-byte aligned values")
        checkCopies([1, 2], [3], "references")
        checkCopies(Optional("a"), nil, "multi-payload enums")
        XCTAssertEqual(MemoryLayout<SIMD4<Float>>.alignment, 16)
    }

    /// The registry lock keeps `owner` and `waiters` first.
    func testRegistryLockWordsAreTheLocksFirstStoredProperty() {
        let lock = RegistryLock()
        lock.lock()
        XCTAssertNotEqual(lock.words.owner.plainValue, 0, "the holder's identifier went into RegistryLock.words")
        lock.lock()
        lock.unlock()
        XCTAssertNotEqual(lock.words.owner.plainValue, 0, "still held: one unlock of two")
        lock.unlock()
        XCTAssertEqual(lock.words.owner.plainValue, 0)
        XCTAssertEqual(lock.words.room.waiters.plainValue, 0)
    }

    /// A registry keeps its view list's head and pending flag first.
    func testObserverRegistryWordsAreTheRegistrysFirstStoredProperty() {
        final class Watcher: Sendable {}
        let registry = ObserverRegistry()
        XCTAssertNil(registry.words.viewHead.plainValue)
        let watcher = Watcher()
        registry.addObserver(watcher)
        XCTAssertTrue(registry.words.hasPendingAdds.plainValue, "an add is pending until the next send")
        var calls = 0
        registry.withObserversHere { (_: Watcher) in calls += 1 }
        XCTAssertEqual(calls, 1)
        XCTAssertFalse(registry.words.hasPendingAdds.plainValue)
        XCTAssertNotNil(registry.words.viewHead.plainValue, "the view's node went into ObserverRegistry.words")
        withExtendedLifetime(watcher) {}
    }

    /// Every single-word host keeps its word first, and its other stored
    /// properties intact after it.
    func testSingleWordHostsKeepTheirWordFirst() {
        let value = ObservableValue(0)
        value.madeExtras.room.waiters.wrappingAdd(3, ordering: .relaxed)
        let extrasWords = AtomicWords.of(value.madeExtras, as: ValueExtras.Words.self)
        XCTAssertEqual(
            extrasWords.pointee.room.waiters.plainValue, 3, "the extras' words are their first stored property")
        XCTAssertFalse(value.turn.admitsFastClaim, "a setter waits")
        value.madeExtras.room.waiters.wrappingSubtract(3, ordering: .relaxed)
        XCTAssertTrue(value.turn.admitsFastClaim)
        XCTAssertNil(extrasWords.pointee.room.condition.plainValue, "no setter waited: no condition made")
        XCTAssertNil(value.madeExtras.isDuplicate, "the stored property after the words is intact")

        let parent = DeadObserverFlag()
        let flag = DeadObserverFlag(parent: parent)
        flag.set()
        XCTAssertTrue(flag.isSetWord.plainValue)
        XCTAssertTrue(parent.isSetWord.plainValue, "the parent reference, after the word, is intact")
        XCTAssertTrue(flag.take())
        XCTAssertFalse(flag.isSetWord.plainValue)

        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
                XCTAssertFalse(value.madeExtras.isArmed)
                XCTAssertNil(extrasWords.pointee.attached.plainValue)
                _ = value.value
                XCTAssertNotNil(extrasWords.pointee.attached.plainValue, "the first read made the observation")
                XCTAssertTrue(value.madeExtras.isArmed)
            }
        #endif

        final class Owner {}
        let gate = OwnerGate()
        var owner: Owner? = Owner()
        XCTAssertNil(gate.slotWord.plainValue)
        XCTAssertTrue(gate.bind(to: owner!))
        XCTAssertNotNil(gate.slotWord.plainValue)
        XCTAssertFalse(gate.ownerIsGone)
        owner = nil
        XCTAssertTrue(gate.ownerIsGone)

        let event = Event<Int>()
        var tokens = Set<Subscription>()
        let token = event.subscribe { _ in }
        XCTAssertFalse(token.cancelsOnReleaseWord.plainValue)
        token.store(in: &tokens)
        XCTAssertTrue(token.cancelsOnReleaseWord.plainValue)
        XCTAssertTrue(token.isActive, "the list and handle, after the word, are intact")
        tokens.removeAll()
    }

    /// A keyed engine keeps its pending-removals flag first, a keyed
    /// registration its `ended` and `expired` words.
    func testKeyedHostsKeepTheirWordsFirst() {
        let keyed = KeyedEvent<Int, Int>()
        let token = keyed.subscribe(key: 1) { _ in }
        XCTAssertFalse(keyed.lists.words.needsSweep.plainValue)
        keyed.lists.needsSweep.store(true, ordering: .relaxed)
        XCTAssertTrue(keyed.lists.words.needsSweep.plainValue)
        keyed.lists.needsSweep.store(false, ordering: .relaxed)
        XCTAssertEqual(keyed.subscribersCount(forKey: 1), 1, "the map pointer, after the word, is intact")

        let registration = KeyedRegistration<Int>(engine: keyed.lists)
        XCTAssertFalse(registration.words.ended.plainValue)
        XCTAssertFalse(registration.cancelSubscription())
        XCTAssertTrue(registration.words.ended.plainValue)
        XCTAssertFalse(registration.words.expired.plainValue, "cancelled, not expired")
        XCTAssertTrue(registration.isEnded)

        let limited = KeyedEvent<Int, Int>()
        let once = limited.subscribe(key: 7, limit: 1) { _ in }
        limited.send(1, forKey: 7)
        XCTAssertFalse(once.isActive, "a spent limit ends the registration through its words")
        token.cancel()
    }

    /// A weak-target box and a limited box keep their expiry's words first:
    /// `didAdd` stores the handle there, and expiring sets the flag there.
    func testExpiringBoxesKeepTheirExpiryWordsFirst() {
        final class Target: Sendable {}
        let event = Event<Int>()
        var target: Target? = Target()
        _ = event.subscribe(target!) { _, _ in }
        let limited = event.subscribe(limit: 1) { _ in }
        var boxes: [Subscriber] = []
        event.slots.forEachBox { boxes.append($0) }
        XCTAssertEqual(boxes.count, 2)
        typealias Targeted = EventTargetSubscriber<Target, Int>
        typealias Limited = QueuedOrLimitedSubscriber<Void, Int, Expiry>
        let targeted = unsafeDowncast(boxes[0], to: Targeted.self)
        let limitedBox = unsafeDowncast(boxes[1], to: Limited.self)
        XCTAssertNotEqual(targeted.expiryWords.sequence.plainValue, 0, "didAdd stored the handle in the box's words")
        XCTAssertNotEqual(limitedBox.expiryWords.sequence.plainValue, 0)
        XCTAssertFalse(targeted.expiryWords.expired.plainValue)
        target = nil
        event.send(1)
        XCTAssertTrue(targeted.expiryWords.expired.plainValue, "the dead target's box expired through its words")
        XCTAssertTrue(limitedBox.expiryWords.expired.plainValue, "the spent limit expired its box through its words")
        XCTAssertFalse(limited.isActive)
        XCTAssertEqual(event.subscribersCount, 0)
    }

    /// A protocol-typed box and a key-path observer's box keep their
    /// expiry's words first too.
    func testProtocolAndKeyPathBoxesKeepTheirExpiryWordsFirst() {
        final class Watcher: WordsPinged, Sendable { func pinged() {} }
        let registry = ObserverRegistry()
        var watcher: Watcher? = Watcher()
        registry.addObserver(watcher!)
        registry.withObservers { (observer: WordsPinged) in observer.pinged() }
        var conforming: [ConformingObserver<WordsPinged>] = []
        registry.view(for: WordsPinged.self).conforming.forEach { conforming.append($0) }
        XCTAssertEqual(conforming.count, 1)
        XCTAssertNotEqual(
            conforming[0].expiryWords.sequence.plainValue, 0, "didAdd stored the handle in the box's words")
        watcher = nil
        registry.withObservers { (observer: WordsPinged) in observer.pinged() }
        XCTAssertTrue(conforming[0].expiryWords.expired.plainValue, "the dead observer's box expired through its words")

        let changes = PropertyChanges(0)
        let observer = changes.makeObserver(delivery: .synchronous, activate: true) { _, _ in }
        var boxes: [PropertySubscriber<Int>] = []
        changes.slots.forEach { boxes.append($0) }
        XCTAssertEqual(boxes.count, 1)
        XCTAssertNotEqual(boxes[0].expiryWords.sequence.plainValue, 0)
        XCTAssertTrue(boxes[0].attached.load(ordering: .relaxed), "the heap word after the expiry's words")
        boxes[0].expiry.expire(of: boxes[0])
        XCTAssertTrue(boxes[0].expiryWords.expired.plainValue)
        withExtendedLifetime(observer) {}
    }

    /// Exact counts under contention: every increment lands once.
    func testConcurrentUpdatesAreAtomic() {
        let host = WordsHost()
        host.count.store(0, ordering: .relaxed)
        let threads = 4
        let perThread = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<perThread {
                host.count.wrappingAdd(1, ordering: .relaxed)
                var current = host.sequence.load(ordering: .relaxed)
                while true {
                    let (exchanged, original) = host.sequence.compareExchange(
                        expected: current, desired: current + 2, ordering: .acquiringAndReleasing)
                    if exchanged { break }
                    current = original
                }
            }
        }
        XCTAssertEqual(host.count.load(ordering: .acquiring), threads * perThread)
        XCTAssertEqual(host.sequence.load(ordering: .acquiring), UInt64(2 * threads * perThread))
    }

    /// A release store publishes plain writes made before it to an acquire
    /// load that sees it (TSan checks the edge in `make tsan`).
    func testReleaseAcquirePublishesPlainWrites() {
        final class Published: @unchecked Sendable {
            var words = WordsHost.Words()
            var payload = 0
            var ready: AtomicWord<Bool> { AtomicWords.word(self, at: WordsHost.Words.flagOffset) }
        }
        for round in 0..<200 {
            let box = Published()
            let finished = DispatchSemaphore(value: 0)
            let reader = Thread {
                while !box.ready.load(ordering: .acquiring) {}
                XCTAssertEqual(box.payload, round)
                finished.signal()
            }
            reader.start()
            box.payload = round
            box.ready.store(true, ordering: .releasing)
            XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "round \(round): the reader finished")
        }
    }
}
