import Foundation

/// The stored value of an ``ObservableValue``: one writer at a time (the
/// thread holding the notification turn), readers on any thread, and no
/// read-modify-write instruction on the writer's side. A view of two words
/// and two copies of the value that the value object keeps (see
/// `ObservableValueWords`); it holds nothing itself.
///
/// `current` says which copy readers take, 0 or 1. The writer writes the
/// other copy, then publishes it by storing `current` (release). A reader
/// announces itself in `readers` for the copy it is about to read (the low
/// 32 bits count readers of copy 0, the high 32 bits readers of copy 1),
/// then checks that `current` still names it; the writer, before
/// overwriting a copy, waits until no reader is announced on it. That is
/// Dekker's pattern: the writer's store of `current` and its load of
/// `readers` at the next write are separated by a full barrier, so either
/// the writer sees the reader's announcement (and waits), or the reader sees
/// the new `current` (and moves to the other copy).
///
/// The caller supplies the writer's barrier: the notification turn's claim
/// is one, and a second write within the same turn passes `fenced: false`
/// to get an explicit fence.
///
/// The copy not named by `current` keeps the value stored before the current
/// one until the next write replaces it.
@usableFromInline
struct ValueStorage<Value> {
    /// The copy readers take: 0 or 1. Written by the writer only.
    @usableFromInline
    let current: AtomicWord<Int>

    /// Readers announced on each copy: copy 0's in the low 32 bits, copy 1's
    /// in the high 32 bits.
    @usableFromInline
    let readers: AtomicWord<UInt>

    /// The two copies, initialized by the owner and destroyed with it.
    @usableFromInline
    let copies: UnsafeMutablePointer<Value>

    @inlinable @inline(__always)
    init(current: AtomicWord<Int>, readers: AtomicWord<UInt>, copies: UnsafeMutablePointer<Value>) {
        self.current = current
        self.readers = readers
        self.copies = copies
    }

    /// What a reader of `copy` adds to `readers`.
    @inlinable @inline(__always)
    static func readerUnit(of copy: Int) -> UInt {
        copy == 0 ? 1 : 1 << 32
    }

    /// Readers announced on `copy`, in a `readers` word.
    @inlinable @inline(__always)
    static func readers(of copy: Int, in word: UInt) -> UInt {
        copy == 0 ? word & 0xFFFF_FFFF : word >> 32
    }

    /// The latest written value; any thread. Never waits for the writer.
    @inlinable
    func read() -> Value {
        while true {
            let copy = current.load(ordering: .acquiring)
            let unit = Self.readerUnit(of: copy)
            // Sequentially consistent: the announcement must be visible
            // before we check `current` again (Dekker).
            readers.wrappingAdd(unit, ordering: .sequentiallyConsistent)
            let stable = current.load(ordering: .sequentiallyConsistent) == copy
            let value: Value? = stable ? copies[copy] : nil
            // Release: our read of the copy happens before a writer that
            // sees the count drop overwrites it.
            readers.wrappingSubtract(unit, ordering: .releasing)
            if let value { return value }
        }
    }

    /// The latest written value, read by the writer (no other thread writes).
    @inlinable
    var writerValue: Value {
        copies[current.load(ordering: .relaxed)]
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
        // Acquire: pairs with the release of a reader's count drop, so its
        // read of the copy happens before our write.
        while Self.readers(of: copy, in: readers.load(ordering: .acquiring)) != 0 {
            // A reader that took this copy before the last publication is
            // between its two loads; readers hold a copy only while copying it.
            spins &+= 1
            if spins > 64 { sched_yield() }
        }
        var replaced = newValue
        swap(&copies[copy], &replaced)
        current.store(copy, ordering: .releasing)
        return replaced
    }
}
