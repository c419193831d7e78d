/// An exact send counter that costs a plain load and store (no locked
/// instruction) for the thread that sends most, and an atomic add for others.
///
/// The first thread to count becomes the owner: only it writes `owned`, so it
/// may increment with a relaxed load and store. Every other thread adds to
/// `shared` atomically. A reader identifies a thread while it lives;
/// when the owner exits, its record may be recycled by a new thread, which then
/// inherits ownership — still a single writer, ordered after the old one by
/// the record's recycling.
///
/// The counter's words live in its owner (see `AtomicWord`'s storage
/// invariant): the owner declares `var triggerWords = TriggerCounter.Words()`
/// as its first stored property and hands itself to `init(in:)`.
@usableFromInline
struct TriggerCounter {
    /// The counter's storage, kept by its owner. Laid out so that two
    /// threads sending at once never share a cache line: `owned` (written by
    /// the owning thread on every send) and `shared` (added to by the others)
    /// start at least 64 bytes from each other, from `owner` (read by every
    /// send) and from whatever the owner stores after the words, so no 64-byte
    /// line holds two of them wherever the allocation starts. (`base`,
    /// written only by `reset()`, may share `owned`'s line.)
    @usableFromInline
    struct Words {
        @usableFromInline var owner = AtomicWordStorage<UInt>(0)
        /// Subtracted from the total: `reset()` moves it instead of zeroing the
        /// counters, so a reset never races with the owner's plain increments.
        @usableFromInline var base = AtomicWordStorage<Int>(0)
        private var ownerLinePadding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        @usableFromInline var owned = AtomicWordStorage<Int>(0)
        private var ownedLinePadding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0)
        @usableFromInline var shared = AtomicWordStorage<Int>(0)
        private var sharedLinePadding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0)

        @usableFromInline
        init() {}

        /// Word offsets: `owner` and `base` first, `owned` 64 bytes on,
        /// `shared` 128 bytes on; 192 bytes in all.
        @inlinable static var ownerOffset: Int { 0 }
        @inlinable static var baseOffset: Int { MemoryLayout<AtomicWordStorage<UInt>>.stride }
        @inlinable static var ownedOffset: Int { 64 }
        @inlinable static var sharedOffset: Int { 128 }
    }

    @usableFromInline let owner: AtomicWord<UInt>
    @usableFromInline let owned: AtomicWord<Int>
    @usableFromInline let shared: AtomicWord<Int>
    @usableFromInline let base: AtomicWord<Int>

    /// The counter whose `Words` are `object`'s first stored property.
    @inlinable @inline(__always)
    init(in object: AnyObject) {
        owner = AtomicWords.word(object, at: Words.ownerOffset)
        owned = AtomicWords.word(object, at: Words.ownedOffset)
        shared = AtomicWords.word(object, at: Words.sharedOffset)
        base = AtomicWords.word(object, at: Words.baseOffset)
    }

    /// Counts one send by the thread whose reader is `reader`. Always
    /// inlined: a call costs more than the count (a few instructions).
    @inlinable @inline(__always)
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
