/// A value an ``IdentityTable`` stores: one word whose bits are never all
/// zero (a class reference, an enum whose cases carry one), which knows the
/// object identity it is stored under, so the table keeps no key of its own
/// and marks an empty bucket with a zero word.
@usableFromInline
package protocol IdentityTableValue {
    /// What a value's identity is read from besides the value itself (for
    /// example the array a value indexes); `Void` when the value holds it.
    associatedtype IdentityContext

    /// The identity this value is stored under. The table asks it while
    /// probing, so it must be the key the value was stored under for as
    /// long as the value is in the table, read in the context the caller
    /// passes.
    func identity(in context: IdentityContext) -> ObjectIdentifier
}

/// A hash map from object identity to `Value`, one word per bucket: the key
/// is not stored but read from the value (``IdentityTableValue``), and a
/// bucket whose word is 0 is empty. Open
/// addressing with linear probing, a multiplicative hash of the address (no
/// seeded hashing: the keys are addresses of live objects, not input an
/// attacker picks) and backward-shift deletion, so lookups, inserts and
/// removals cost a few nanoseconds whatever the size, and removals leave no
/// tombstones.
///
/// Storage is one raw buffer of a power-of-two capacity, `values`:
/// initialized exactly where its word is not 0, and zero-filled elsewhere
/// (a value is never all zero bits, and a moved-out bucket is zeroed). No
/// copy-on-write and no bounds checks on the add and remove paths: every
/// index is masked. Kept at most half full. Not thread-safe: its owner
/// guards it.
///
/// Every member that probes takes the context the values' identities are
/// read in; between two calls the owner keeps every stored value's identity
/// what it was stored under.
@usableFromInline
package final class IdentityTable<Value: IdentityTableValue> {
    // Unchecked exclusivity: the owner guards the table and no member calls
    // out while it accesses a stored property (`identity(in:)` reads the
    // value and its context, never the table).
    @usableFromInline @exclusivity(unchecked) package var values: UnsafeMutablePointer<Value>
    @usableFromInline @exclusivity(unchecked) package var count = 0
    @usableFromInline @exclusivity(unchecked) package var mask: Int
    /// `64 - log2(capacity)`: the hash keeps the top bits.
    @usableFromInline @exclusivity(unchecked) package var shift: UInt

    /// Two buckets to start with (one entry, kept at most half full): an
    /// observable with one observer, the common case, pays 16 bytes;
    /// doubling takes larger tables to their size.
    @inlinable
    package init() {
        precondition(
            MemoryLayout<Value>.size == MemoryLayout<UInt>.size, "IdentityTable: a value must be one word")
        (values, mask, shift) = Self.allocate(capacity: 2)
    }

    deinit {
        deinitializeAll()
        values.deallocate()
    }

    @inlinable
    package static func allocate(
        capacity: Int
    ) -> (UnsafeMutablePointer<Value>, Int, UInt) {
        let values = UnsafeMutablePointer<Value>.allocate(capacity: capacity)
        for index in 0..<capacity { clear(index, of: values) }
        return (values, capacity - 1, UInt(64 - capacity.trailingZeroBitCount))
    }

    @inlinable
    package var isEmpty: Bool { count == 0 }

    /// Whether bucket `index` of `values` holds a value: its word is not 0.
    @inlinable @inline(__always)
    static func isOccupied(_ index: Int, of values: UnsafeMutablePointer<Value>) -> Bool {
        UnsafeRawPointer(values + index).load(as: UInt.self) != 0
    }

    /// Marks bucket `index` of `values` empty (its value moved out, or
    /// never there). Stores a zero word; the memory stays bound to `Value`.
    @inlinable @inline(__always)
    static func clear(_ index: Int, of values: UnsafeMutablePointer<Value>) {
        UnsafeMutableRawPointer(values + index).storeBytes(of: 0, as: UInt.self)
    }

    @inlinable @inline(__always)
    func isOccupied(_ index: Int) -> Bool { Self.isOccupied(index, of: values) }

    @inlinable @inline(__always)
    func clear(_ index: Int) { Self.clear(index, of: values) }

    @inlinable @inline(__always)
    func key(at index: Int, in context: Value.IdentityContext) -> UInt {
        UInt(bitPattern: values[index].identity(in: context))
    }

    @inlinable @inline(__always)
    package func home(of key: UInt) -> Int {
        // Fibonacci hashing: the multiply spreads the address's middle bits
        // (objects are 16-byte aligned) into the top ones, which we keep.
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift) & mask
    }

    @inlinable @inline(__always)
    package func bucket(of key: UInt, in context: Value.IdentityContext) -> (index: Int, found: Bool) {
        var index = home(of: key)
        while true {
            if !isOccupied(index) { return (index, false) }
            if self.key(at: index, in: context) == key { return (index, true) }
            index = (index &+ 1) & mask
        }
    }

    /// The value stored for `identifier`, if any.
    @inlinable
    package func value(forKey identifier: ObjectIdentifier, in context: Value.IdentityContext) -> Value? {
        let (index, found) = bucket(of: UInt(bitPattern: identifier), in: context)
        return found ? values[index] : nil
    }

    /// Stores `value` under its identity; returns the value it replaced, if
    /// any.
    @inlinable @discardableResult
    package func updateValue(_ value: Value, in context: Value.IdentityContext) -> Value? {
        let key = UInt(bitPattern: value.identity(in: context))
        let (index, found) = bucket(of: key, in: context)
        if found {
            let old = (values + index).move()
            (values + index).initialize(to: value)
            return old
        }
        (values + index).initialize(to: value)
        assert(isOccupied(index), "IdentityTable: a value's bits are all zero")
        count &+= 1
        if count &* 2 > mask &+ 1 { grow(in: context) }
        return nil
    }

    /// Removes the value stored for `identifier`; returns it, if any.
    @inlinable @discardableResult
    package func removeValue(forKey identifier: ObjectIdentifier, in context: Value.IdentityContext) -> Value? {
        var (hole, found) = bucket(of: UInt(bitPattern: identifier), in: context)
        guard found else { return nil }
        let removed = (values + hole).move()
        clear(hole)
        count &-= 1
        // Backward shift: move later entries of the probe run into the hole
        // when the hole lies between their home and where they sit.
        var index = (hole &+ 1) & mask
        while isOccupied(index) {
            let home = home(of: key(at: index, in: context))
            if (hole &- home) & mask < (index &- home) & mask {
                (values + hole).moveInitialize(from: values + index, count: 1)
                clear(index)
                hole = index
            }
            index = (index &+ 1) & mask
        }
        return removed
    }

    /// Buckets, empty ones included (a power of two).
    package var bucketCount: Int { mask &+ 1 }

    /// Whether storing one more key would grow the table (it is kept at
    /// most half full).
    @inlinable
    package var isFullForInsertion: Bool { (count &+ 1) &* 2 > mask &+ 1 }

    /// Every stored identity, in no particular order.
    package func identifiers(in context: Value.IdentityContext) -> [ObjectIdentifier] {
        var result: [ObjectIdentifier] = []
        result.reserveCapacity(count)
        for index in 0...mask where isOccupied(index) {
            result.append(values[index].identity(in: context))
        }
        return result
    }

    /// Every stored value, in no particular order.
    package var storedValues: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        for index in 0...mask where isOccupied(index) {
            result.append(values[index])
        }
        return result
    }

    private func deinitializeAll() {
        for index in 0...mask where isOccupied(index) {
            (values + index).deinitialize(count: 1)
        }
    }

    /// Doubles the buckets.
    @inlinable
    package func grow(in context: Value.IdentityContext) {
        let (oldValues, oldMask) = (values, mask)
        (values, mask, shift) = Self.allocate(capacity: (oldMask &+ 1) &* 2)
        for index in 0...oldMask where Self.isOccupied(index, of: oldValues) {
            let key = UInt(bitPattern: oldValues[index].identity(in: context))
            let (slot, _) = bucket(of: key, in: context)
            (values + slot).moveInitialize(from: oldValues + index, count: 1)
        }
        oldValues.deallocate()
    }

    #if DEBUG
        /// Consistency check (debug builds): every stored value is
        /// reachable from its identity's home without crossing an empty
        /// bucket, and `count` is right.
        package func checkConsistency(in context: Value.IdentityContext) {
            var stored = 0
            for index in 0...mask where isOccupied(index) {
                stored += 1
                precondition(
                    bucket(of: key(at: index, in: context), in: context) == (index, true),
                    "IdentityTable: unreachable value")
            }
            precondition(stored == count, "IdentityTable: count \(count), stored \(stored)")
        }
    #endif
}

extension IdentityTable where Value.IdentityContext == Void {
    /// The value stored for `identifier`, if any (values that hold their
    /// identity).
    @inlinable
    package subscript(identifier: ObjectIdentifier) -> Value? {
        value(forKey: identifier, in: ())
    }
}
