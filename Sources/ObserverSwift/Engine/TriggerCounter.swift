import Synchronization

/// An exact send counter that costs a plain load and store (no locked
/// instruction) for the thread that sends most, and an atomic add for others.
///
/// The first thread to count becomes the owner: only it writes `owned`, so it
/// may increment with a relaxed load and store. Every other thread adds to
/// `shared` atomically. A reader identifies a thread while it lives;
/// when the owner exits, its record may be recycled by a new thread, which then
/// inherits ownership — still a single writer, ordered after the old one by
/// the record's recycling.
@usableFromInline
struct TriggerCounter: ~Copyable {
    @usableFromInline let owner = Atomic<UInt>(0)
    @usableFromInline let owned = Atomic<Int>(0)
    @usableFromInline let shared = Atomic<Int>(0)
    /// Subtracted from the total: `reset()` moves it instead of zeroing the
    /// counters, so a reset never races with the owner's plain increments.
    let base = Atomic<Int>(0)

    @usableFromInline
    init() {}

    /// Counts one send by the thread whose reader is `reader`.
    @inlinable
    func increment(by reader: SectionReader) {
        let me = reader.threadIdentity
        let current = owner.load(ordering: .relaxed)
        if current == me
            || (current == 0 && owner.compareExchange(expected: 0, desired: me, ordering: .relaxed).exchanged)
        {
            // Relaxed: the owner is the only writer of `owned`.
            owned.store(owned.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        } else {
            shared.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Sends counted since creation or the last `reset()`.
    var value: Int {
        owned.load(ordering: .relaxed) &+ shared.load(ordering: .relaxed) &- base.load(ordering: .relaxed)
    }

    func reset() {
        base.store(owned.load(ordering: .relaxed) &+ shared.load(ordering: .relaxed), ordering: .relaxed)
    }
}
