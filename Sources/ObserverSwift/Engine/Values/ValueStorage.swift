/// The stored value of an ``ObservableValue``: one writer at a time (the
/// thread holding the notification turn), readers on any thread, and no
/// read-modify-write instruction on the writer's side. Neither side ever
/// waits for the other. A view of two words and two inline copies of the
/// value that the value object keeps (see `ObservableValueWords`); it holds
/// nothing itself.
///
/// `current` says where readers find the value: 0 or 1 for an inline copy,
/// or the address of an ``EpochRetiredValue`` holding it. The writer writes
/// a copy no reader uses, then publishes it by storing `current` (release).
///
/// Inline copies: a reader announces itself in `readers` for the copy it is
/// about to read (the low 32 bits count readers of copy 0, the high 32 bits
/// readers of copy 1), then checks that `current` still names it. The
/// writer, before overwriting an inline copy, checks that no reader is
/// announced on it. That is Dekker's pattern: the writer's store of
/// `current` and its load of `readers` at the next write are separated by a
/// full barrier, so either the writer sees the reader's announcement, or the
/// reader sees the new `current` (and moves on).
///
/// When every inline copy the writer could overwrite has a reader announced
/// on it (a reader that was descheduled while copying it), the writer does
/// not wait for that reader: it publishes the value in an
/// ``EpochRetiredValue`` instead, which readers copy inside a read section
/// and which is released after a grace period once replaced. So a set never
/// waits for a reader, and the common path (no reader on the copy, which
/// readers hold only while copying it) allocates nothing.
///
/// The caller supplies the writer's barrier: the notification turn's claim
/// is one, and a second write within the same turn passes `fenced: false`
/// to get an explicit fence.
///
/// The inline copy not named by `current` keeps the value stored there
/// until a later write replaces it.
@usableFromInline
struct ValueStorage<Value> {
    /// Where readers find the value: 0 or 1 (an inline copy), or an
    /// ``EpochRetiredValue``'s address. Written by the writer only.
    @usableFromInline
    let current: AtomicWord<Int>

    /// Readers announced on each inline copy: copy 0's in the low 32 bits,
    /// copy 1's in the high 32 bits.
    @usableFromInline
    let readers: AtomicWord<UInt>

    /// The two inline copies, initialized by the owner and destroyed with it.
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

    /// Added to copy 1's count in `readers` by the writer while `current`
    /// names a heap value, so that the writer's inline path, which checks
    /// that count, leaves such a write to ``writeSlowly(_:)``. Readers never
    /// look at it.
    @inlinable @inline(__always)
    static var heapMark: UInt { 1 << 63 }

    /// Readers announced on `copy`, in a `readers` word (with the
    /// ``heapMark`` for copy 1 while it is set).
    @inlinable @inline(__always)
    static func readers(of copy: Int, in word: UInt) -> UInt {
        copy == 0 ? word & 0xFFFF_FFFF : word >> 32
    }

    /// Readers announced on `copy`, in a `readers` word, without the mark.
    @inlinable @inline(__always)
    static func announcedReaders(of copy: Int, in word: UInt) -> UInt {
        readers(of: copy, in: word & ~heapMark)
    }

    /// Whether a `current` word names an inline copy (0 or 1) rather than
    /// an ``EpochRetiredValue``'s address.
    @inlinable @inline(__always)
    static func isInline(_ word: Int) -> Bool {
        word & ~1 == 0
    }

    /// The latest written value; any thread. Never waits for the writer.
    @inlinable @inline(__always)
    func read() -> Value {
        let copy = current.load(ordering: .acquiring)
        if Self.isInline(copy) {
            let unit = Self.readerUnit(of: copy)
            // Sequentially consistent: the announcement must be visible
            // before we check `current` again (Dekker).
            readers.wrappingAdd(unit, ordering: .sequentiallyConsistent)
            if current.load(ordering: .sequentiallyConsistent) == copy {
                let value = copies[copy]
                // Release: our read of the copy happens before a writer that
                // sees the count drop overwrites it.
                readers.wrappingSubtract(unit, ordering: .releasing)
                return value
            }
            readers.wrappingSubtract(unit, ordering: .releasing)
        }
        return readSlowly()
    }

    /// ``read()`` once a write moved `current` under a reader, or while the
    /// value is on the heap.
    @usableFromInline
    @inline(never)
    func readSlowly() -> Value {
        while true {
            let copy = current.load(ordering: .acquiring)
            guard Self.isInline(copy) else {
                if let value = readPublished() { return value }
                continue
            }
            let unit = Self.readerUnit(of: copy)
            readers.wrappingAdd(unit, ordering: .sequentiallyConsistent)
            let value: Value? = current.load(ordering: .sequentiallyConsistent) == copy ? copies[copy] : nil
            readers.wrappingSubtract(unit, ordering: .releasing)
            if let value { return value }
        }
    }

    /// The value of the ``EpochRetiredValue`` `current` names, copied inside
    /// a read section; nil when `current` names an inline copy by then.
    func readPublished() -> Value? {
        withReadSection {
            // Acquire: the object is initialized before its publication.
            let word = current.load(ordering: .acquiring)
            if Self.isInline(word) { return nil }
            return EpochRetiredValue<Value>.withPublished(at: UnsafeMutableRawPointer(bitPattern: word)!) { $0 }
        }
    }

    /// The latest written value, read by the writer (no other thread writes).
    @inlinable
    var writerValue: Value {
        let word = current.load(ordering: .relaxed)
        if Self.isInline(word) { return copies[word] }
        return EpochRetiredValue<Value>.withPublished(at: UnsafeMutableRawPointer(bitPattern: word)!) { $0 }
    }

    /// Writes `newValue` and publishes it; returns the value the written
    /// inline copy held (or `newValue` itself when it was published on the
    /// heap), for the caller to release outside any lock. Writer only;
    /// never waits. `fenced`: a full barrier has run since the previous
    /// write's publication (the turn's claim).
    @inlinable
    @inline(__always)
    func write(_ newValue: Value, fenced: Bool) -> Value {
        if !fenced { atomicMemoryFence(ordering: .sequentiallyConsistent) }
        // The inline copy readers do not take (copy 1 while the value is on
        // the heap: an address is even, and the mark is then set on copy 1).
        let copy = 1 &- (current.load(ordering: .relaxed) & 1)
        // Acquire: pairs with the release of a reader's count drop, so its
        // read of the copy happens before our write.
        guard Self.readers(of: copy, in: readers.load(ordering: .acquiring)) == 0 else {
            return writeSlowly(newValue)
        }
        var replaced = newValue
        swap(&copies[copy], &replaced)
        current.store(copy, ordering: .releasing)
        return replaced
    }

    /// ``write(_:fenced:)`` when a reader is announced on the inline copy it
    /// would overwrite (a reader descheduled while copying it), or while the
    /// value is on the heap: writes a free inline copy if there is one,
    /// publishes the value on the heap otherwise, and retires a replaced
    /// heap value.
    @usableFromInline
    @inline(never)
    func writeSlowly(_ newValue: Value) -> Value {
        let published = current.load(ordering: .relaxed)
        let announced = readers.load(ordering: .acquiring)
        if Self.isInline(published) {
            // The other copy has a reader: do not wait for it.
            let address = EpochRetiredValue<Value>.published(newValue)
            readers.wrappingAdd(Self.heapMark, ordering: .relaxed)
            // Release: the object is initialized before readers see its address.
            current.store(Int(bitPattern: address), ordering: .releasing)
            return newValue
        }
        let replacedAddress = UnsafeMutableRawPointer(bitPattern: published)!
        defer { EpochRetiredValue<Value>.retire(at: replacedAddress) }
        guard let copy = (0...1).first(where: { Self.announcedReaders(of: $0, in: announced) == 0 }) else {
            let address = EpochRetiredValue<Value>.published(newValue)
            current.store(Int(bitPattern: address), ordering: .releasing)
            return newValue
        }
        var replaced = newValue
        swap(&copies[copy], &replaced)
        current.store(copy, ordering: .releasing)
        readers.wrappingSubtract(Self.heapMark, ordering: .relaxed)
        return replaced
    }

    /// Releases the heap value `current` names, if any: for the owner's
    /// `deinit`, when no other thread reads.
    func releasePublished() {
        let word = current.load(ordering: .acquiring)
        if !Self.isInline(word) { EpochRetiredValue<Value>.release(at: UnsafeMutableRawPointer(bitPattern: word)!) }
    }
}
