import CObserverCore

/// The `key_context` of one key in a C keymap (`oc_keymap_t`): a box around
/// a `Hashable` value, retained by the map until a grace period after the
/// key is removed, so a sender that found the key may still compare it.
///
/// One map may hold keys of several types (a keyed observable whose key type
/// is inferred per call); keys of different types are never equal.
@usableFromInline
class AnyKeyBox: @unchecked Sendable {
    // @unchecked: immutable after init; read by senders on any thread.

    /// `ObjectIdentifier(Key.self)`: lets a sender check the type before an
    /// unchecked downcast, without a dynamic cast.
    @usableFromInline
    let keyType: ObjectIdentifier

    init(keyType: ObjectIdentifier) {
        self.keyType = keyType
    }

    /// Whether this key equals the key of the ``KeyProbe`` at `probe` (of
    /// any key type). The C map's exact comparison.
    func matches(_ probe: UnsafeRawPointer) -> Bool { false }

    /// The key, type-erased (for listing keys).
    var anyKey: AnyHashable { fatalError("abstract") }

    /// Removes `handle` from this key's list in `map`, blocking or not.
    func remove(_ handle: SlotHandle, from map: OpaquePointer, blocking: Bool) -> oc_status_t {
        OC_ENOENT
    }
}

/// A key of type `Key`.
@usableFromInline
final class KeyBox<Key: Hashable>: AnyKeyBox, @unchecked Sendable {
    @usableFromInline
    let key: Key

    @usableFromInline
    init(_ key: Key) {
        self.key = key
        super.init(keyType: ObjectIdentifier(Key.self))
    }

    override func matches(_ probe: UnsafeRawPointer) -> Bool {
        // Every probe starts with its key type (see KeyProbe).
        guard probe.load(as: KeyProbeHeader.self).keyType == keyType else { return false }
        return probe.assumingMemoryBound(to: KeyProbe<Key>.self).pointee.key == key
    }

    override var anyKey: AnyHashable { AnyHashable(key) }

    override func remove(_ handle: SlotHandle, from map: OpaquePointer, blocking: Bool) -> oc_status_t {
        let hash = AnyKeyedSlotLists.hash(key)
        return withUnsafePointer(to: KeyProbe(key)) { probe in
            blocking
                ? oc_keymap_remove(map, hash, probe, handle)
                : oc_keymap_try_remove(map, hash, probe, handle)
        }
    }
}

/// The fixed-layout start of every probe Swift passes to the C map as
/// `probe_key`: the key's type, then how the probe matches.
@usableFromInline
struct KeyProbeHeader {
    /// `ObjectIdentifier(Key.self)` of the probe's key.
    @usableFromInline let keyType: ObjectIdentifier
    /// When set, the probe matches exactly the entry whose `key_context` this
    /// is, without comparing keys: how a subscription finds the entry it was
    /// added to again, whatever its key's `==` and hash do.
    @usableFromInline let entry: UnsafeRawPointer?
    /// When set, a comparison that matches writes the entry's `key_context`
    /// here (how `add` learns which entry it joined).
    @usableFromInline let matched: UnsafeMutablePointer<UnsafeRawPointer?>?

    @inlinable
    init(
        keyType: ObjectIdentifier, entry: UnsafeRawPointer? = nil,
        matched: UnsafeMutablePointer<UnsafeRawPointer?>? = nil
    ) {
        self.keyType = keyType
        self.entry = entry
        self.matched = matched
    }
}

/// What Swift passes to the C map as `probe_key` for a key of type `Key`:
/// the header, then the key. Swift lays out struct fields in declaration
/// order (TypeLayout.rst), so the header is at offset 0 whatever `Key` is,
/// and `keyBoxMatchesProbe` can read it before knowing the probe's key type.
@usableFromInline
struct KeyProbe<Key: Hashable> {
    @usableFromInline let header: KeyProbeHeader
    @usableFromInline let key: Key

    @inlinable
    init(_ key: Key, matched: UnsafeMutablePointer<UnsafeRawPointer?>? = nil) {
        self.header = KeyProbeHeader(keyType: ObjectIdentifier(Key.self), matched: matched)
        self.key = key
    }
}

/// The entry of a keymap one box was added to: enough to find it again by
/// identity (see `KeyProbeHeader.entry`), never by comparing keys.
@usableFromInline
struct KeyedSlot: Sendable {
    /// The hash the entry was created with.
    let hash: UInt64
    /// The entry's `key_context`, as an address: compared, never dereferenced.
    /// An entry is removed only once its list is empty, so while the box is
    /// stored this names its entry; afterwards the handle matches nothing.
    let entry: UInt
    let handle: SlotHandle
}

/// The C map's `oc_key_equal_fn`.
func keyBoxMatchesProbe(_ keyContext: UnsafeRawPointer, _ probe: UnsafeRawPointer?) -> Bool {
    guard let probe else { return false }
    let header = probe.load(as: KeyProbeHeader.self)
    if let entry = header.entry { return entry == keyContext }
    let matches = Unmanaged<AnyKeyBox>.fromOpaque(keyContext)._withUnsafeGuaranteedRef { $0.matches(probe) }
    if matches, let matched = header.matched { matched.pointee = keyContext }
    return matches
}

/// The C map's `release_key`: balances the `passRetained` of an adopted key.
func releaseKeyBox(_ keyContext: UnsafeMutableRawPointer) {
    Unmanaged<AnyKeyBox>.fromOpaque(keyContext).release()
}
