/// An exact send counter that costs a plain load and store (no locked
/// instruction) for the thread that sends most, and an atomic add for
/// others, and keeps two words in its owner until a second thread sends.
///
/// The first thread to count becomes the owner: only it writes `owned`, so
/// it may increment with a relaxed load and store. A reader identifies a
/// thread while it lives; when the owner exits, its record may be recycled
/// by a new thread, which then inherits ownership — still a single writer,
/// ordered after the old one by the record's recycling.
///
/// Contention. While one thread sends, its increments write `owned`, in the
/// owner's own words, next to what every send reads (`owner`, the owner's
/// other fields): harmless, nobody else reads that line. The first send
/// from another thread (or a `reset()`) moves counting to a
/// ``ContendedCounts`` block of three cache lines, allocated then and freed
/// with the owner: the owner's increments go to the block's `owned` line,
/// every other thread adds to its `shared` line, and the owner's words are
/// only read from then on, so two senders never write one cache line.
/// `owner` then holds the block's address with its low bit set (addresses
/// of records and blocks are aligned, so a thread identity never has it);
/// the owner's fast path compares `owner` with its identity exactly as
/// before and simply misses. The inline `owned` keeps what was counted
/// before the move (only its single writer could still add to it, once).
///
/// The counter's words live in its owner (see `AtomicWord`'s storage
/// invariant): the owner declares `TriggerCounter.Words` among its first
/// stored property's words and hands itself and their offset to
/// `init(in:at:)`.
@usableFromInline
struct TriggerCounter {
    /// The counter's inline storage, kept by its owner: 16 bytes.
    @usableFromInline
    struct Words {
        /// The owning thread's identity, 0 before the first send, or a
        /// `ContendedCounts` block's address with bit 0 set.
        @usableFromInline var owner = AtomicWordStorage<UInt>(0)
        /// Sends counted by the owner before counting moved to a block.
        @usableFromInline var owned = AtomicWordStorage<Int>(0)

        @usableFromInline
        init() {}

        @inlinable static var ownerOffset: Int { 0 }
        @inlinable static var ownedOffset: Int { MemoryLayout<AtomicWordStorage<UInt>>.stride }
    }

    @usableFromInline let owner: AtomicWord<UInt>
    @usableFromInline let owned: AtomicWord<Int>

    /// The counter whose `Words` start `offset` bytes into `object`'s
    /// first stored property.
    @inlinable @inline(__always)
    init(in object: AnyObject, at offset: Int = 0) {
        owner = AtomicWords.word(object, at: offset + Words.ownerOffset)
        owned = AtomicWords.word(object, at: offset + Words.ownedOffset)
    }

    /// Counts one send by the thread whose reader is `reader`. Always
    /// inlined: a call costs more than the count (a few instructions).
    @inlinable @inline(__always)
    func increment(by reader: SectionReader) {
        let me = reader.threadIdentity
        if owner.load(ordering: .relaxed) == me {
            // Relaxed: the owner is the only writer of `owned`.
            owned.store(owned.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        } else {
            incrementOtherwise(by: me)
        }
    }

    /// The first send, a send from another thread than the owner, and every
    /// send once counting moved to a block.
    @usableFromInline @inline(never)
    func incrementOtherwise(by me: UInt) {
        // Acquire: a block's words, initialized before its publication
        // (release, below), are read through the address loaded here.
        var current = owner.load(ordering: .acquiring)
        while true {
            if let counts = ContendedCounts(word: current) {
                counts.increment(by: me)
                return
            }
            if current == 0 {
                // Relaxed: the claim only elects the single writer of `owned`.
                let claim = owner.compareExchange(expected: 0, desired: me, ordering: .relaxed)
                if claim.exchanged {
                    owned.store(owned.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
                    return
                }
                current = claim.original
                continue
            }
            if current == me {
                owned.store(owned.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
                return
            }
            current = moveToBlock(from: current)
        }
    }

    /// Publishes a block owned by `current` (the owner's identity, or 0)
    /// unless another thread did first; returns the owner word now.
    private func moveToBlock(from current: UInt) -> UInt {
        let counts = ContendedCounts.allocate(owner: current)
        // Release: the block's words are initialized before its address is
        // seen; acquire on failure, to read the winner's block.
        let move = owner.compareExchange(
            expected: current, desired: counts.word, ordering: .acquiringAndReleasing)
        if move.exchanged { return counts.word }
        counts.deallocate()
        return move.original
    }

    /// Sends counted since creation or the last `reset()`.
    var value: Int {
        let inline = owned.load(ordering: .relaxed)
        guard let counts = ContendedCounts(word: owner.load(ordering: .acquiring)) else { return inline }
        return inline &+ counts.total
    }

    /// Moves the base to the current total; never races with the owner's
    /// plain increments (they are not zeroed).
    func reset() {
        var current = owner.load(ordering: .acquiring)
        while ContendedCounts(word: current) == nil { current = moveToBlock(from: current) }
        let counts = ContendedCounts(word: current)!
        counts.base.store(owned.load(ordering: .relaxed) &+ counts.sum, ordering: .relaxed)
    }

    /// Frees the block, if counting moved to one. For the owner's deinit,
    /// when no thread counts any more.
    func deallocateContendedCounts() {
        ContendedCounts(word: owner.load(ordering: .acquiring))?.deallocate()
    }
}

/// The padded words a ``TriggerCounter`` counts in once a second thread
/// sends: three 64-byte lines, 64-byte aligned, so that `owned` (the
/// owner's increments), `shared` (everyone else's) and the line read by
/// every count (`owner`, `base`) never share a line.
@usableFromInline
struct ContendedCounts {
    @usableFromInline let address: UnsafeMutableRawPointer

    static let byteCount = 192
    static let ownerOffset = 0
    static let baseOffset = 8
    static let ownedOffset = 64
    static let sharedOffset = 128

    /// The block an owner word names, or nil when it names a thread (or nobody).
    @usableFromInline
    init?(word: UInt) {
        guard word & 1 == 1, let address = UnsafeMutableRawPointer(bitPattern: word & ~1) else { return nil }
        self.address = address
    }

    private init(address: UnsafeMutableRawPointer) {
        self.address = address
    }

    /// A zeroed block whose owner is `owner` (0: the next thread to count).
    static func allocate(owner: UInt) -> ContendedCounts {
        let address = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        address.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        address.storeBytes(of: owner, toByteOffset: ownerOffset, as: UInt.self)
        return ContendedCounts(address: address)
    }

    func deallocate() { address.deallocate() }

    /// The owner word that names this block.
    var word: UInt { UInt(bitPattern: address) | 1 }

    private func word<Value>(at offset: Int) -> AtomicWord<Value> {
        AtomicWord(at: (address + offset).assumingMemoryBound(to: AtomicWordStorage<Value>.self))
    }
    var owner: AtomicWord<UInt> { word(at: Self.ownerOffset) }
    var base: AtomicWord<Int> { word(at: Self.baseOffset) }
    var owned: AtomicWord<Int> { word(at: Self.ownedOffset) }
    var shared: AtomicWord<Int> { word(at: Self.sharedOffset) }

    func increment(by me: UInt) {
        let current = owner.load(ordering: .relaxed)
        if current == me
            || (current == 0 && owner.compareExchange(expected: 0, desired: me, ordering: .relaxed).exchanged)
        {
            // Relaxed: the block's owner is the only writer of `owned`.
            owned.store(owned.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        } else {
            shared.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Counted in the block.
    var sum: Int { owned.load(ordering: .relaxed) &+ shared.load(ordering: .relaxed) }

    /// Counted in the block, less the base.
    var total: Int { sum &- base.load(ordering: .relaxed) }
}
