import Foundation
import XCTest

@testable import ObserverSwift

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
    func testOperationsMatchSynchronizationAtomicSemantics() {
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
        XCTAssertEqual(MemoryLayout<Trigger>.offset(of: \.shared), Trigger.sharedOffset)
        XCTAssertEqual(MemoryLayout<Trigger>.offset(of: \.base), Trigger.baseOffset)
        XCTAssertEqual(MemoryLayout<ValueStorageWords>.offset(of: \.current), ValueStorageWords.currentOffset)
        XCTAssertEqual(MemoryLayout<ValueStorageWords>.offset(of: \.readers0), ValueStorageWords.readers0Offset)
        XCTAssertEqual(MemoryLayout<ValueStorageWords>.offset(of: \.readers1), ValueStorageWords.readers1Offset)
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
        let words = event.triggerWords
        XCTAssertEqual(
            words.owned.plainValue + words.shared.plainValue - words.base.plainValue, 2,
            "the counter's views wrote Event.triggerWords")
        XCTAssertNotEqual(words.owner.plainValue, 0, "the sending thread took ownership")
    }

    /// A slot list keeps its sweep flag first.
    func testSlotListSweepFlagIsTheListsFirstStoredProperty() {
        let event = Event<Int>()
        XCTAssertFalse(event.slots.needsSweepWord.plainValue)
        event.slots.needsSweep.store(true, ordering: .relaxed)
        XCTAssertTrue(event.slots.needsSweepWord.plainValue)
        event.slots.needsSweep.store(false, ordering: .relaxed)
        let token = event.subscribe { _ in }
        XCTAssertEqual(event.subscribersCount, 1, "the list's C pointer, after the word, is intact")
        token.cancel()
    }

    /// A value's storage keeps `current` and `readers` first.
    func testValueStorageWordsAreTheStoragesFirstStoredProperty() {
        let storage = ValueStorage("first")
        storage.readers1.wrappingAdd(3, ordering: .relaxed)
        storage.current.store(1, ordering: .releasing)
        XCTAssertEqual(storage.words.current.plainValue, 1)
        XCTAssertEqual(storage.words.readers0.plainValue, 0)
        XCTAssertEqual(storage.words.readers1.plainValue, 3)
        storage.readers1.wrappingSubtract(3, ordering: .relaxed)
        XCTAssertEqual(storage.read(), "first", "the copies, after the words, are intact")
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
            let reader = Thread {
                while !box.ready.load(ordering: .acquiring) {}
                XCTAssertEqual(box.payload, round)
            }
            reader.start()
            box.payload = round
            box.ready.store(true, ordering: .releasing)
            while !reader.isFinished { usleep(10) }
        }
    }
}
