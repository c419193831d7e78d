import Foundation

/// The stored value of an ``ObservableValue``: one writer at a time (the
/// thread holding the notification turn), readers on any thread, and no
/// read-modify-write instruction on the writer's side.
///
/// Two copies, `slots[0]` and `slots[1]`; `current` says which one readers
/// take. The writer writes the other copy, then publishes it by storing
/// `current` (release). A reader announces itself in `readers[i]` of the copy
/// it is about to read, then checks that `current` still names it; the
/// writer, before overwriting a copy, waits until no reader is announced on
/// it. That is Dekker's pattern: the writer's store of `current` and its load
/// of `readers[i]` at the next write are separated by a full barrier, so
/// either the writer sees the reader's announcement (and waits), or the
/// reader sees the new `current` (and moves to the other copy).
///
/// The caller supplies the writer's barrier: the notification turn's claim
/// is one, and a second write within the same turn passes `fenced: false`
/// to get an explicit fence.
///
/// The copy not named by `current` keeps the value stored before the current
/// one until the next write replaces it.
@usableFromInline
final class ValueStorage<Value>: @unchecked Sendable {
    // @unchecked: `slots` follows the protocol above (one writer, announced
    // readers); `current` and `readers` are atomic.

    /// First stored property: the words of `current` and `readers` (see `AtomicWord`).
    @usableFromInline
    var words = ValueStorageWords()

    @usableFromInline
    let slots: UnsafeMutablePointer<Value>

    /// The copy readers take: 0 or 1. Written by the writer only.
    @usableFromInline
    var current: AtomicWord<Int> { AtomicWords.word(self, at: ValueStorageWords.currentOffset) }

    /// Readers announced on each copy.
    @usableFromInline
    var readers0: AtomicWord<Int> { AtomicWords.word(self, at: ValueStorageWords.readers0Offset) }
    @usableFromInline
    var readers1: AtomicWord<Int> { AtomicWords.word(self, at: ValueStorageWords.readers1Offset) }

    @usableFromInline
    init(_ value: Value) {
        slots = .allocate(capacity: 2)
        slots.initialize(to: value)
        (slots + 1).initialize(to: value)
    }

    deinit {
        slots.deinitialize(count: 2)
        slots.deallocate()
    }

    @inlinable
    func readers(of copy: Int) -> Int {
        copy == 0 ? readers0.load(ordering: .acquiring) : readers1.load(ordering: .acquiring)
    }

    /// The latest written value; any thread. Never waits for the writer.
    @inlinable
    func read() -> Value {
        while true {
            let copy = current.load(ordering: .acquiring)
            // Sequentially consistent: the announcement must be visible
            // before we check `current` again (Dekker).
            if copy == 0 {
                readers0.wrappingAdd(1, ordering: .sequentiallyConsistent)
            } else {
                readers1.wrappingAdd(1, ordering: .sequentiallyConsistent)
            }
            let stable = current.load(ordering: .sequentiallyConsistent) == copy
            let value: Value? = stable ? slots[copy] : nil
            // Release: our read of the copy happens before a writer that
            // sees the count drop overwrites it.
            if copy == 0 {
                readers0.wrappingSubtract(1, ordering: .releasing)
            } else {
                readers1.wrappingSubtract(1, ordering: .releasing)
            }
            if let value { return value }
        }
    }

    /// The latest written value, read by the writer (no other thread writes).
    @inlinable
    var writerValue: Value {
        slots[current.load(ordering: .relaxed)]
    }

    /// Writes `newValue` and publishes it; returns the value the written copy
    /// held (two writes old), for the caller to release outside any lock.
    /// Writer only. `fenced`: a full barrier has run since the previous
    /// write's publication (the turn's claim).
    @inlinable
    @inline(__always)
    func write(_ newValue: Value, fenced: Bool) -> Value {
        if !fenced { atomicMemoryFence(ordering: .sequentiallyConsistent) }
        let copy = 1 &- current.load(ordering: .relaxed)
        var spins = 0
        while readers(of: copy) != 0 {
            // A reader that took this copy before the last publication is
            // between its two loads; readers hold a copy only while copying it.
            spins &+= 1
            if spins > 64 { sched_yield() }
        }
        var replaced = newValue
        swap(&slots[copy], &replaced)
        current.store(copy, ordering: .releasing)
        return replaced
    }
}

/// `ValueStorage`'s atomic words, three `Int` words at the offsets below.
@usableFromInline
struct ValueStorageWords {
    @usableFromInline var current = AtomicWordStorage<Int>(0)
    @usableFromInline var readers0 = AtomicWordStorage<Int>(0)
    @usableFromInline var readers1 = AtomicWordStorage<Int>(0)
    @usableFromInline init() {}

    @inlinable static var currentOffset: Int { 0 }
    @inlinable static var readers0Offset: Int { MemoryLayout<AtomicWordStorage<Int>>.stride }
    @inlinable static var readers1Offset: Int { 2 * MemoryLayout<AtomicWordStorage<Int>>.stride }
}
