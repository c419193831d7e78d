/// A hash map from object identity to `Value`: open addressing with linear
/// probing, a multiplicative hash of the address (no seeded hashing: the
/// keys are addresses of live objects, not input an attacker picks) and
/// backward-shift deletion, so lookups, inserts and removals cost a few
/// nanoseconds whatever the size, and removals leave no tombstones.
///
/// Storage is two raw buffers of one capacity (a power of two): `keys`, 0
/// for an empty bucket, and `values`, initialized exactly where the key is
/// not 0. No copy-on-write and no bounds checks on the add and remove paths:
/// every index is masked. Kept at most half full. Not thread-safe: its owner
/// guards it.
final class IdentityTable<Value> {
    /// 0 marks an empty bucket (no object lives at address 0).
    private var keys: UnsafeMutablePointer<UInt>
    private var values: UnsafeMutablePointer<Value>
    private(set) var count = 0
    private var mask: Int
    /// `64 - log2(capacity)`: the hash keeps the top bits.
    private var shift: UInt

    /// Two buckets to start with (one entry, kept at most half full): an
    /// observable with one observer, the common case, pays 32 bytes of keys
    /// and values; doubling takes larger tables to their size.
    init() {
        (keys, values, mask, shift) = Self.allocate(capacity: 2)
    }

    deinit {
        deinitializeAll()
        keys.deallocate()
        values.deallocate()
    }

    private static func allocate(
        capacity: Int
    ) -> (UnsafeMutablePointer<UInt>, UnsafeMutablePointer<Value>, Int, UInt) {
        let keys = UnsafeMutablePointer<UInt>.allocate(capacity: capacity)
        keys.initialize(repeating: 0, count: capacity)
        let values = UnsafeMutablePointer<Value>.allocate(capacity: capacity)
        return (keys, values, capacity - 1, UInt(64 - capacity.trailingZeroBitCount))
    }

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    private func home(of key: UInt) -> Int {
        // Fibonacci hashing: the multiply spreads the address's middle bits
        // (objects are 16-byte aligned) into the top ones, which we keep.
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift) & mask
    }

    @inline(__always)
    private func bucket(of key: UInt) -> (index: Int, found: Bool) {
        var index = home(of: key)
        while true {
            let stored = keys[index]
            if stored == key { return (index, true) }
            if stored == 0 { return (index, false) }
            index = (index &+ 1) & mask
        }
    }

    subscript(identifier: ObjectIdentifier) -> Value? {
        get {
            let (index, found) = bucket(of: UInt(bitPattern: identifier))
            return found ? values[index] : nil
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: identifier)
            } else {
                removeValue(forKey: identifier)
            }
        }
    }

    /// Stores `value`; returns the value it replaced, if any.
    @discardableResult
    func updateValue(_ value: Value, forKey identifier: ObjectIdentifier) -> Value? {
        let key = UInt(bitPattern: identifier)
        let (index, found) = bucket(of: key)
        if found {
            let old = (values + index).move()
            (values + index).initialize(to: value)
            return old
        }
        keys[index] = key
        (values + index).initialize(to: value)
        count &+= 1
        if count &* 2 > mask &+ 1 { grow() }
        return nil
    }

    /// Removes the value stored for `identifier`; returns it, if any.
    @discardableResult
    func removeValue(forKey identifier: ObjectIdentifier) -> Value? {
        var (hole, found) = bucket(of: UInt(bitPattern: identifier))
        guard found else { return nil }
        let removed = (values + hole).move()
        keys[hole] = 0
        count &-= 1
        // Backward shift: move later entries of the probe run into the hole
        // when the hole lies between their home and where they sit.
        var index = (hole &+ 1) & mask
        while true {
            let key = keys[index]
            if key == 0 { break }
            let home = home(of: key)
            if (hole &- home) & mask < (index &- home) & mask {
                keys[hole] = key
                (values + hole).moveInitialize(from: values + index, count: 1)
                keys[index] = 0
                hole = index
            }
            index = (index &+ 1) & mask
        }
        return removed
    }

    /// Buckets, empty ones included (a power of two).
    var bucketCount: Int { mask &+ 1 }

    /// Whether storing one more key would grow the table (it is kept at
    /// most half full).
    var isFullForInsertion: Bool { (count &+ 1) &* 2 > mask &+ 1 }

    /// Every stored identifier, in no particular order.
    var identifiers: [ObjectIdentifier] {
        var result: [ObjectIdentifier] = []
        result.reserveCapacity(count)
        for index in 0...mask where keys[index] != 0 {
            // ObjectIdentifier is the object address; this undoes `UInt(bitPattern:)`.
            result.append(unsafeBitCast(keys[index], to: ObjectIdentifier.self))
        }
        return result
    }

    /// Every stored value, in no particular order.
    var storedValues: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        for index in 0...mask where keys[index] != 0 {
            result.append(values[index])
        }
        return result
    }

    private func deinitializeAll() {
        for index in 0...mask where keys[index] != 0 {
            (values + index).deinitialize(count: 1)
        }
    }

    /// Doubles the buckets.
    func grow() {
        let (oldKeys, oldValues, oldMask) = (keys, values, mask)
        (keys, values, mask, shift) = Self.allocate(capacity: (oldMask &+ 1) &* 2)
        for index in 0...oldMask where oldKeys[index] != 0 {
            let (slot, _) = bucket(of: oldKeys[index])
            keys[slot] = oldKeys[index]
            (values + slot).moveInitialize(from: oldValues + index, count: 1)
        }
        oldKeys.deallocate()
        oldValues.deallocate()
    }

    #if DEBUG
        /// Consistency check (debug builds): every stored key is reachable
        /// from its home without crossing an empty bucket, and `count` is right.
        func checkConsistency() {
            var stored = 0
            for index in 0...mask where keys[index] != 0 {
                stored += 1
                precondition(bucket(of: keys[index]) == (index, true), "IdentityTable: unreachable key")
            }
            precondition(stored == count, "IdentityTable: count \(count), stored \(stored)")
        }
    #endif
}
