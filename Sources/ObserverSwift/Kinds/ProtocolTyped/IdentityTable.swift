/// A hash map from object identity to `Value`: open addressing with linear
/// probing, a multiplicative hash of the address (no seeded hashing: the
/// keys are addresses of live objects, not input an attacker picks) and
/// backward-shift deletion, so lookups, inserts and removals cost a few
/// nanoseconds whatever the size, and removals leave no tombstones.
///
/// Kept at most half full. Not thread-safe: its owner guards it.
struct IdentityTable<Value> {
    /// 0 marks an empty bucket (no object lives at address 0).
    private var keys: ContiguousArray<UInt>
    private var values: ContiguousArray<Value?>
    private(set) var count = 0
    private var mask: Int

    init() {
        keys = ContiguousArray(repeating: 0, count: 16)
        values = ContiguousArray(repeating: nil, count: 16)
        mask = 15
    }

    var isEmpty: Bool { count == 0 }

    private func home(of key: UInt) -> Int {
        // Fibonacci hashing: the multiply spreads the address's middle bits
        // (objects are 16-byte aligned) into the top ones, which we keep.
        let mixed = key &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> UInt(64 - (mask + 1).trailingZeroBitCount)) & mask
    }

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
    mutating func updateValue(_ value: Value, forKey identifier: ObjectIdentifier) -> Value? {
        let key = UInt(bitPattern: identifier)
        let (index, found) = bucket(of: key)
        if found {
            let old = values[index]
            values[index] = value
            return old
        }
        keys[index] = key
        values[index] = value
        count += 1
        if count * 2 > mask + 1 { grow() }
        return nil
    }

    /// Removes the value stored for `identifier`; returns it, if any.
    @discardableResult
    mutating func removeValue(forKey identifier: ObjectIdentifier) -> Value? {
        var (hole, found) = bucket(of: UInt(bitPattern: identifier))
        guard found else { return nil }
        let removed = values[hole]
        keys[hole] = 0
        values[hole] = nil
        count -= 1
        // Backward shift: move later entries of the probe run into the hole
        // when the hole lies between their home and where they sit.
        var index = (hole &+ 1) & mask
        while keys[index] != 0 {
            let home = home(of: keys[index])
            let distanceToHole = (hole &- home) & mask
            let distanceToIndex = (index &- home) & mask
            if distanceToHole < distanceToIndex {
                keys[hole] = keys[index]
                values[hole] = values[index]
                keys[index] = 0
                values[index] = nil
                hole = index
            }
            index = (index &+ 1) & mask
        }
        return removed
    }

    mutating func removeAll() {
        self = IdentityTable()
    }

    /// Every stored identifier, in no particular order.
    var identifiers: [ObjectIdentifier] {
        var result: [ObjectIdentifier] = []
        result.reserveCapacity(count)
        for key in keys where key != 0 {
            // ObjectIdentifier is the object address; this undoes `UInt(bitPattern:)`.
            result.append(unsafeBitCast(key, to: ObjectIdentifier.self))
        }
        return result
    }

    /// Every stored value, in no particular order.
    var storedValues: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        for index in keys.indices where keys[index] != 0 {
            result.append(values[index]!)
        }
        return result
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldValues = values
        let capacity = (mask + 1) * 2
        keys = ContiguousArray(repeating: 0, count: capacity)
        values = ContiguousArray(repeating: nil, count: capacity)
        mask = capacity - 1
        for index in oldKeys.indices where oldKeys[index] != 0 {
            let (slot, _) = bucket(of: oldKeys[index])
            keys[slot] = oldKeys[index]
            values[slot] = oldValues[index]
        }
    }
}
