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
/// ``ContendedCounts`` block, allocated then and freed with the owner,
/// where every sending thread counts on a cache line of its own (the
/// first thread's slot is the owner's), and the owner's words are only
/// read from then on: no cache line is written by two senders.
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
package struct TriggerCounter {
    /// The counter's inline storage, kept by its owner: 16 bytes.
    @usableFromInline
    package struct Words {
        /// The owning thread's identity, 0 before the first send, or a
        /// `ContendedCounts` block's address with bit 0 set.
        @usableFromInline package var owner = AtomicWordStorage<UInt>(0)
        /// Sends counted by the owner before counting moved to a block.
        @usableFromInline package var owned = AtomicWordStorage<Int>(0)

        @usableFromInline
        package init() {}

        @inlinable package static var ownerOffset: Int { 0 }
        @inlinable package static var ownedOffset: Int { MemoryLayout<AtomicWordStorage<UInt>>.stride }
    }

    @usableFromInline package let owner: AtomicWord<UInt>
    @usableFromInline package let owned: AtomicWord<Int>

    /// The counter whose `Words` start `offset` bytes into `object`'s
    /// first stored property.
    @inlinable @inline(__always)
    package init(in object: AnyObject, at offset: Int = 0) {
        owner = AtomicWords.word(object, at: offset + Words.ownerOffset)
        owned = AtomicWords.word(object, at: offset + Words.ownedOffset)
    }

    /// Counts one send by the thread whose reader is `reader`. Always
    /// inlined: a call costs more than the count (a few instructions).
    @inlinable @inline(__always)
    package func increment(by reader: SectionReader) {
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
    package func incrementOtherwise(by me: UInt) {
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

    /// Publishes a block whose first slot is `current`'s (the owner's
    /// identity, or 0: free) unless another thread did first; returns the
    /// owner word now.
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

    /// Sends counted since creation or the last `reset()`: exact once the
    /// counting threads are quiet (their sends happen before this read).
    /// While threads send, it reads each thread's count once, one after
    /// the other, with no lock: a value between the total when the read
    /// began and the total when it ended, not one instant's total.
    package var value: Int {
        let inline = owned.load(ordering: .relaxed)
        guard let counts = ContendedCounts(word: owner.load(ordering: .acquiring)) else { return inline }
        return inline &+ counts.total
    }

    /// Moves the base to the current total; never races with the owner's
    /// plain increments (they are not zeroed).
    package func reset() {
        var current = owner.load(ordering: .acquiring)
        while ContendedCounts(word: current) == nil { current = moveToBlock(from: current) }
        let counts = ContendedCounts(word: current)!
        counts.base.store(owned.load(ordering: .relaxed) &+ counts.sum, ordering: .relaxed)
    }

    /// Frees the block, if counting moved to one. For the owner's deinit,
    /// when no thread counts any more.
    package func deallocateContendedCounts() {
        ContendedCounts(word: owner.load(ordering: .acquiring))?.deallocate()
    }
}

/// The padded words a ``TriggerCounter`` counts in once a second thread
/// sends: a count of its own per sending thread, each on a 64-byte line
/// that only that thread writes, summed when read.
///
/// A block is a table of ``slotCount`` slots, 64-byte aligned: its first
/// line holds the next table's address (0 for none), the base
/// (``TriggerCounter/reset()``'s) and the slots' thread identities; slot
/// `k`'s count has line `k + 1` to itself. A thread counts in the slot that
/// holds its identity; a thread not in the table claims the first free
/// slot (compare-exchange of its identity from 0), and when every slot is
/// taken it goes on to the next table, which the first thread to need it
/// allocates and publishes (compare-exchange from 0). Every send reads the
/// first line, which changes only when a thread claims a slot or the
/// counter is reset; no two threads write one count line.
///
/// A slot's identity is its thread's reader (epoch record) address, which
/// another thread reuses only after the first exited: the slot then passes
/// to it, still with a single writer, ordered after the old one by the
/// record's recycling. So slots are never given back, and the tables
/// stay bounded by the most threads that ever lived at once.
@usableFromInline
package struct ContendedCounts {
    @usableFromInline package let address: UnsafeMutableRawPointer

    /// Slots per table: the identities fill the first line beside the two
    /// header words.
    package static let slotCount = 6
    package static let lineSize = 64
    package static let byteCount = lineSize * (1 + slotCount)
    package static let nextOffset = 0
    package static let baseOffset = 8
    package static let identitiesOffset = 16

    /// The byte offset of slot `slot`'s count: its own line.
    package static func countOffset(ofSlot slot: Int) -> Int { lineSize * (1 + slot) }

    /// The block an owner word names, or nil when it names a thread (or nobody).
    @usableFromInline
    package init?(word: UInt) {
        guard word & 1 == 1, let address = UnsafeMutableRawPointer(bitPattern: word & ~1) else { return nil }
        self.address = address
    }

    private init(address: UnsafeMutableRawPointer) {
        self.address = address
    }

    /// A zeroed table whose first slot belongs to `owner` (0: free).
    package static func allocate(owner: UInt) -> ContendedCounts {
        let address = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: lineSize)
        address.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        address.storeBytes(of: owner, toByteOffset: identitiesOffset, as: UInt.self)
        return ContendedCounts(address: address)
    }

    /// Frees this table and the tables after it.
    package func deallocate() {
        var table: ContendedCounts? = self
        while let current = table {
            table = current.next
            current.address.deallocate()
        }
    }

    /// The owner word that names this block.
    package var word: UInt { UInt(bitPattern: address) | 1 }

    private func word<Value>(at offset: Int) -> AtomicWord<Value> {
        AtomicWord(at: (address + offset).assumingMemoryBound(to: AtomicWordStorage<Value>.self))
    }
    private var nextWord: AtomicWord<UInt> { word(at: Self.nextOffset) }
    package var base: AtomicWord<Int> { word(at: Self.baseOffset) }
    package func identity(ofSlot slot: Int) -> AtomicWord<UInt> {
        word(at: Self.identitiesOffset + slot * MemoryLayout<UInt>.stride)
    }
    package func count(ofSlot slot: Int) -> AtomicWord<Int> { word(at: Self.countOffset(ofSlot: slot)) }

    /// The table after this one, if a thread needed it. Acquire: its words,
    /// zeroed before its publication (release), are read through it.
    private var next: ContendedCounts? {
        let next = nextWord.load(ordering: .acquiring)
        return next == 0 ? nil : ContendedCounts(address: UnsafeMutableRawPointer(bitPattern: next)!)
    }

    /// The count line of the thread `me` (its identity), claiming a slot
    /// for it (and allocating a table) if it has none.
    package func countLine(of me: UInt) -> AtomicWord<Int> {
        var table = self
        while true {
            for slot in 0..<Self.slotCount {
                let identity = table.identity(ofSlot: slot)
                var current = identity.load(ordering: .relaxed)
                if current == 0 {
                    // Relaxed: the claim only elects the slot's single writer.
                    current = identity.compareExchange(expected: 0, desired: me, ordering: .relaxed).original
                    if current == 0 { return table.count(ofSlot: slot) }
                }
                if current == me { return table.count(ofSlot: slot) }
            }
            table = table.next ?? table.appendTable()
        }
    }

    /// Publishes an empty table after this one unless another thread did
    /// first; returns the table there now.
    private func appendTable() -> ContendedCounts {
        let table = ContendedCounts.allocate(owner: 0)
        // Release: the table's zeroed words before its address; acquire on
        // failure, to read the winner's.
        let append = nextWord.compareExchange(
            expected: 0, desired: UInt(bitPattern: table.address), ordering: .acquiringAndReleasing)
        if append.exchanged { return table }
        table.deallocate()
        return ContendedCounts(address: UnsafeMutableRawPointer(bitPattern: append.original)!)
    }

    /// Counts one send by the thread `me`: a plain load and store of its
    /// own line (relaxed: its only writer). A thread found in the first
    /// table's claimed slots counts inline; the others (claiming a slot,
    /// or in a later table) through ``countLine(of:)``.
    @inline(__always)
    package func increment(by me: UInt) {
        var slot = 0
        while slot < Self.slotCount {
            let identity = identity(ofSlot: slot).load(ordering: .relaxed)
            if identity == me { return Self.addOne(to: count(ofSlot: slot)) }
            // Slots are claimed in order: a free one ends the claimed ones.
            if identity == 0 { break }
            slot &+= 1
        }
        incrementClaiming(by: me)
    }

    @inline(never)
    private func incrementClaiming(by me: UInt) {
        Self.addOne(to: countLine(of: me))
    }

    @inline(__always)
    private static func addOne(to count: AtomicWord<Int>) {
        count.store(count.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Counted in the block: every slot's count, each read once.
    package var sum: Int {
        var sum = 0
        var table: ContendedCounts? = self
        while let current = table {
            for slot in 0..<Self.slotCount { sum &+= current.count(ofSlot: slot).load(ordering: .relaxed) }
            table = current.next
        }
        return sum
    }

    /// Counted in the block, less the base.
    package var total: Int { sum &- base.load(ordering: .relaxed) }
}
