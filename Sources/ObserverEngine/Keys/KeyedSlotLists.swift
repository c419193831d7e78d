import CObserverCore
import Foundation

/// The Swift owner of one C keymap (`oc_keymap_t`): one observer list per
/// key, each holding retained ``Subscriber`` boxes or ``HandlerCell``s
/// (plain closures stored under one key) exactly like a ``SlotList`` does. The engine under every keyed observer kind; untyped
/// here (what removals, counts and registrations need), typed by its box in
/// ``KeyedSlotLists``, the only way to create one.
///
/// - A key's list is created by the first ``add(_:forKey:)`` for it and
///   removed (retired through the core's epoch reclamation, together with
///   the key) as soon as its last box goes.
/// - Senders look a key up lock-free with ``list(forKey:hash:)`` inside a
///   read section and iterate its list as `Event.send` does
///   (``KeyedSlotLists/send(forKey:_:)``); a key with no list costs a hash
///   and one probe, and allocates nothing.
/// - Keys are any `Hashable`, chosen per call: one engine may hold keys of
///   several types (they never compare equal). Exact comparison is `==`, so
///   hash collisions only cost time.
///
/// Every removal must go through this type (never `oc_list_*` on a key's
/// list directly): the map counts each key's boxes to know when it empties.
@usableFromInline
package class AnyKeyedSlotLists: PendingRemovalsHolder, SlotListWordsOwner, @unchecked Sendable {
    // @unchecked: the C map is internally synchronized (writers take its
    // mutex, readers use epoch sections); `pendingSlots` is only touched
    // under `pendingRemovalsLock`; the rest are atomic words.

    /// First stored property (see ``SlotListWordsOwner``). Eight bytes, so
    /// that an engine is 40 bytes (a 48-byte heap block).
    package var words = SlotListWords()

    @usableFromInline
    package let pointer: OpaquePointer

    /// Removals a send could not do without blocking (a writer lock was
    /// taken); the next writer call does them. Their boxes have expired
    /// already, so they no longer deliver meanwhile. Guarded by
    /// `pendingRemovalsLock`, one lock for every engine: queuing happens
    /// only when a send meets a busy writer lock, so an engine carries no
    /// lock of its own for it (an empty array allocates nothing).
    private var pendingSlots: [KeyedSlot] = []

    /// The lock of every engine's `pendingSlots`.
    private static let pendingRemovalsLock = NSLock()

    /// Calls `body` with the pending removals, under their lock.
    private func withPendingSlots<Result>(_ body: (inout [KeyedSlot]) -> Result) -> Result {
        Self.pendingRemovalsLock.lock()
        defer { Self.pendingRemovalsLock.unlock() }
        return body(&pendingSlots)
    }

    /// Table slots one ``sweepDeadTargetsStep()`` examines. The table is at
    /// most half full and at least a quarter full once it has grown
    /// (tombstones aside), so a step visits about 2 to 4 keys; each subscribe
    /// and each cancel takes one step and adds at most one key.
    package static var sweepStride: Int { 8 }

    fileprivate init() {
        guard let pointer = oc_keymap_create(keyBoxMatchesProbe, releaseKeyBox, releaseKeyedContext) else {
            fatalError("ObserverSwift: out of memory creating a keyed observer map")
        }
        self.pointer = pointer
    }

    deinit {
        oc_keymap_destroy(pointer)
    }

    /// The hash the map stores for `key`. Swift's `Hasher` is seeded per
    /// process, which is fine: hashes never leave the process.
    @inlinable
    package static func hash<Key: Hashable>(_ key: Key) -> UInt64 {
        UInt64(UInt(bitPattern: key.hashValue))
    }

    // MARK: The send path

    /// True when no key has a list (no read section needed).
    @inlinable
    package var isEmpty: Bool { oc_keymap_is_empty(pointer) }

    /// The list of `key` (whose hash is `hash`), or nil. Must be called
    /// inside a read section; the list stays valid until it ends.
    ///
    /// The map finds the first entry with this 64-bit hash without calling
    /// back into Swift; the key is then compared here, specialized and
    /// inline. Only a full hash collision (or a key of another type with
    /// the same hash) takes the slower exact lookup through the C callback.
    @inlinable
    @inline(__always)
    package func list<Key: Hashable>(forKey key: Key, hash: UInt64) -> OpaquePointer? {
        Self.list(in: pointer, forKey: key, hash: hash)
    }

    /// ``list(forKey:hash:)`` in the C map of an `AnyKeyedSlotLists`
    /// (`pointer`), for an owner that reaches it without a Swift reference.
    @inlinable
    @inline(__always)
    package static func list<Key: Hashable>(in map: OpaquePointer, forKey key: Key, hash: UInt64) -> OpaquePointer? {
        guard let entry = oc_keymap_find_hash(map, hash) else { return nil }
        let isSameKey = Unmanaged<AnyKeyBox>.fromOpaque(entry.pointee.key_context)
            ._withUnsafeGuaranteedRef { box in
                box.keyType == ObjectIdentifier(Key.self)
                    && unsafeDowncast(box, to: KeyBox<Key>.self).key == key
            }
        if isSameKey { return oc_key_entry_list(entry) }
        return withUnsafePointer(to: KeyProbe(key)) { oc_keymap_lookup(map, hash, $0) }
    }

    // MARK: Writers

    /// Stores `box` under `key` (retained until a grace period after its
    /// removal), creating the key's list if needed, and returns the entry
    /// the box joined with its handle there, so that the box can be removed
    /// by identity (``remove(_:)``) whatever `Key`'s `==` and hash do later:
    /// a key not equal to itself (`Double.nan`) included. One box may be
    /// stored under several keys. Only ``KeyedSlotLists`` calls it, with a
    /// box of its type.
    ///
    /// Inlinable, so that a caller in another module specializes it: the
    /// key's hash, its ``KeyBox`` and its probe are the only generic work,
    /// and unspecialized they cost a runtime metadata lookup each. The rest
    /// is ``addBox(_:hash:keyContext:probe:matched:)``.
    @inlinable
    package final func addBox<Key: Hashable>(_ box: Subscriber, forKey key: Key) -> KeyedSlot {
        let hash = Self.hash(key)
        let keyContext = Unmanaged.passRetained(KeyBox(key) as AnyKeyBox).toOpaque()
        // The existing entry the add joined, written by `keyBoxMatchesProbe`.
        var matched: UnsafeRawPointer?
        return withUnsafeMutablePointer(to: &matched) { matched in
            withUnsafePointer(to: KeyProbe(key, matched: matched)) { probe in
                addBox(box, hash: hash, keyContext: keyContext, probe: UnsafeRawPointer(probe), matched: matched)
            }
        }
    }

    /// The untyped part of ``addBox(_:forKey:)``: `keyContext` is a retained
    /// ``KeyBox`` of the key (adopted by the map when the key is new,
    /// released here otherwise), `probe` a ``KeyProbe`` of the same key whose
    /// `matched` is `matched`.
    @usableFromInline
    package final func addBox(
        _ box: Subscriber, hash: UInt64, keyContext: UnsafeMutableRawPointer, probe: UnsafeRawPointer,
        matched: UnsafeMutablePointer<UnsafeRawPointer?>
    ) -> KeyedSlot {
        if box.expiresWithTarget {
            if !holdsTargets.load(ordering: .relaxed) { holdsTargets.store(true, ordering: .relaxed) }
        }
        return addContext(
            Unmanaged.passRetained(box).toOpaque(), hash: hash, keyContext: keyContext, probe: probe, matched: matched)
    }

    /// Stores `handler` in a ``HandlerCell`` under `key` alone (freed by the
    /// map after its grace period once removed) and returns the entry it
    /// joined with its handle, as ``addBox(_:forKey:)`` does for a box.
    /// Inlinable, so that the closure goes into its cell as the caller holds
    /// it (an unspecialized call would wrap it in a reabstraction thunk, an
    /// allocation of its own), and the key's work is specialized.
    @inlinable
    package final func addHandler<Key: Hashable, Value>(_ handler: @escaping (Value) -> Void, forKey key: Key)
        -> KeyedSlot
    {
        let hash = Self.hash(key)
        let keyContext = Unmanaged.passRetained(KeyBox(key) as AnyKeyBox).toOpaque()
        var matched: UnsafeRawPointer?
        return withUnsafeMutablePointer(to: &matched) { matched in
            withUnsafePointer(to: KeyProbe(key, matched: matched)) { probe in
                addContext(
                    HandlerCell.make(handler), hash: hash, keyContext: keyContext, probe: UnsafeRawPointer(probe),
                    matched: matched)
            }
        }
    }

    /// The untyped part of ``addHandler(_:forKey:)`` and
    /// ``addBox(_:forKey:)``: stores `context` (a tagged cell or a retained
    /// box); releases it and stops the process when the core cannot store it.
    @usableFromInline
    package final func addContext(
        _ context: UnsafeMutableRawPointer, hash: UInt64, keyContext: UnsafeMutableRawPointer,
        probe: UnsafeRawPointer, matched: UnsafeMutablePointer<UnsafeRawPointer?>
    ) -> KeyedSlot {
        performPendingRemovals()
        sweepDeadTargetsStep()
        var handle = SlotHandle.notAdded
        var keyAdopted = false
        let status = oc_keymap_add(pointer, hash, probe, keyContext, context, &handle, &keyAdopted)
        let entry = keyAdopted ? UInt(bitPattern: keyContext) : UInt(bitPattern: matched.pointee)
        if !keyAdopted { Unmanaged<AnyKeyBox>.fromOpaque(keyContext).release() }
        guard status == OC_OK, entry != 0 else {
            if status == OC_OK { oc_keymap_remove(pointer, hash, keyContext, handle) }
            releaseKeyedContext(context)
            fatalError("ObserverSwift: cannot add a keyed observer: \(String(cString: oc_status_string(status)))")
        }
        return KeyedSlot(hash: hash, entry: entry, handle: handle)
    }

    /// The token of a subscription whose box was stored once, as `slot`, and
    /// never ends on its own (a closure without limit or target): cancelling
    /// removes that slot.
    @usableFromInline
    package final func subscription(storedAt slot: KeyedSlot) -> Subscription {
        Subscription(registration: KeyedSlotRegistration(engine: self, slot: slot))
    }

    /// Removes the box that ``addSlot(_:forKey:)`` stored as `slot`; false
    /// when it is gone already. Finds the key's entry by identity.
    @discardableResult
    package func remove(_ slot: KeyedSlot) -> Bool {
        performPendingRemovals()
        let removed = withIdentityProbe(slot) { oc_keymap_remove(pointer, slot.hash, $0, slot.handle) == OC_OK }
        sweepDeadTargetsStep()
        return removed
    }

    /// One step of the amortized sweep of dead targets (as
    /// ``AnySlotList/sweepDeadTargetsStep()`` does for one list), taken by
    /// every subscribe and cancel once the map has held a target's box:
    /// visits the keys in the next ``sweepStride`` slots of the C map's
    /// table and ends the subscriptions there whose target has been
    /// deallocated, which removes their slots, and their keys when those
    /// empty. Outside every lock (each key's boxes are walked in a read
    /// section); the probe takes no reference to a target.
    package func sweepDeadTargetsStep() {
        guard holdsTargets.load(ordering: .relaxed) else { return }
        var cursor = Int(sweepCursor.load(ordering: .relaxed))
        _ = oc_keymap_visit_some(
            pointer, &cursor, Self.sweepStride,
            { entry, _ in
                withReadSection {
                    forEachVisibleSubscriber(in: oc_key_entry_list(entry)) { box in
                        // Expires (and removes without blocking) a box whose target died.
                        box.expireIfTargetIsGone()
                    }
                }
                return true
            }, nil)
        sweepCursor.store(UInt32(truncatingIfNeeded: cursor), ordering: .relaxed)
    }

    /// ``remove(_:)`` from the send path: never blocks. When a writer lock is
    /// taken the removal is queued for the next writer call (the box has
    /// expired, so it does not deliver meanwhile).
    package func removeFromSendPath(_ slot: KeyedSlot) {
        let status = withIdentityProbe(slot) { oc_keymap_try_remove(pointer, slot.hash, $0, slot.handle) }
        guard status == OC_EBUSY else { return }
        withPendingSlots { $0.append(slot) }
        needsSweep.store(true, ordering: .releasing)
        PendingSweeps.register(self)
    }

    /// The queued removals, taken out of the queue, or nil when none is
    /// queued.
    private func takePendingRemovals() -> [KeyedSlot]? {
        // A plain load first: every subscribe and cancel comes here, and an
        // exchange is a locked instruction even when nothing is pending.
        // Relaxed: the exchange that follows orders what it finds.
        guard needsSweep.load(ordering: .relaxed),
            needsSweep.exchange(false, ordering: .acquiring)
        else { return nil }
        return withPendingSlots { list in
            defer { list.removeAll() }
            return list
        }
    }

    /// Retries the queued removals without blocking: for a send that met a
    /// box whose removal is still queued.
    package func retryPendingRemovalsFromSendPath() {
        guard let pending = takePendingRemovals() else { return }
        for slot in pending { removeFromSendPath(slot) }
    }

    /// Whether `handle` names a box stored under `key` now.
    package func contains<Key: Hashable>(_ handle: SlotHandle, forKey key: Key) -> Bool {
        withUnsafePointer(to: KeyProbe(key)) { probe in
            oc_keymap_contains(pointer, Self.hash(key), probe, handle)
        }
    }

    /// Whether the box ``addSlot(_:forKey:)`` stored as `slot` is stored now.
    package func contains(_ slot: KeyedSlot) -> Bool {
        withIdentityProbe(slot) { oc_keymap_contains(pointer, slot.hash, $0, slot.handle) }
    }

    private func withIdentityProbe<Result>(_ slot: KeyedSlot, _ body: (UnsafeRawPointer) -> Result) -> Result {
        let header = KeyProbeHeader(
            keyType: ObjectIdentifier(KeyedSlot.self), entry: UnsafeRawPointer(bitPattern: slot.entry))
        return withUnsafePointer(to: header) { body(UnsafeRawPointer($0)) }
    }

    /// Removes the box `handle` names under `key`; false when the handle is
    /// stale or foreign or the key is absent.
    @discardableResult
    package func remove<Key: Hashable>(_ handle: SlotHandle, forKey key: Key) -> Bool {
        performPendingRemovals()
        return withUnsafePointer(to: KeyProbe(key)) { probe in
            oc_keymap_remove(pointer, Self.hash(key), probe, handle) == OC_OK
        }
    }

    /// Removes the box `handle` names under the key `keyBox` holds (a key
    /// found by ``forEachKey(_:)``); false when it is gone already.
    @discardableResult
    package func remove(_ handle: SlotHandle, underKeyOf keyBox: AnyKeyBox) -> Bool {
        performPendingRemovals()
        return keyBox.remove(handle, from: pointer, blocking: true) == OC_OK
    }

    /// Removes every box under `key` for which `predicate` is true (all when
    /// nil); returns how many. `predicate` runs under the list's writer lock
    /// and must not call back into this engine.
    @discardableResult
    package func removeAll<Key: Hashable>(forKey key: Key, where predicate: ((Subscriber) -> Bool)? = nil) -> Int {
        performPendingRemovals()
        var removed = 0
        withPredicate(predicate) { function, argument in
            withUnsafePointer(to: KeyProbe(key)) { probe in
                _ = oc_keymap_remove_key_if(pointer, Self.hash(key), probe, function, argument, &removed)
            }
        }
        return removed
    }

    /// Removes every box, under every key, for which `predicate` is true (all
    /// when nil); returns how many (slots: a box under three keys counts 3).
    @discardableResult
    package func removeAll(where predicate: ((Subscriber) -> Bool)? = nil) -> Int {
        performPendingRemovals()
        var removed = 0
        withPredicate(predicate) { function, argument in
            let status = oc_keymap_remove_if(pointer, function, argument, &removed)
            if status == OC_ENOMEM {
                fatalError("ObserverSwift: out of memory removing keyed observers")
            }
        }
        return removed
    }

    /// Runs removals a send had to queue.
    package func performPendingRemovals() {
        guard let pending = takePendingRemovals() else { return }
        for slot in pending {
            _ = withIdentityProbe(slot) { oc_keymap_remove(pointer, slot.hash, $0, slot.handle) }
        }
    }

    // MARK: Queries

    /// Keys that have a list now.
    package var keyCount: Int { Int(oc_keymap_key_count(pointer)) }

    /// Boxes stored under `key` now, expired ones included.
    package func storedCount<Key: Hashable>(forKey key: Key) -> Int {
        withUnsafePointer(to: KeyProbe(key)) { probe in
            Int(oc_keymap_count(pointer, Self.hash(key), probe))
        }
    }

    /// The contexts of the subscriptions under `key` that can still deliver:
    /// every cell, and the boxes whose ``Subscriber/checkLiveness()`` says
    /// so (which expires dead ones it finds).
    package func liveContexts<Key: Hashable>(forKey key: Key) -> [UnsafeMutableRawPointer] {
        performPendingRemovals()
        let hash = Self.hash(key)
        var live: [UnsafeMutableRawPointer] = []
        withReadSection {
            guard let list = list(forKey: key, hash: hash) else { return }
            Self.appendLiveContexts(of: list, to: &live)
        }
        return live
    }

    /// ``liveContexts(forKey:)`` over every key: a context stored under
    /// several keys (one box) is listed once per key.
    package func liveContexts() -> [UnsafeMutableRawPointer] {
        var live: [UnsafeMutableRawPointer] = []
        forEachKey { _, list in
            withReadSection { Self.appendLiveContexts(of: list, to: &live) }
        }
        return live
    }

    /// Inside a read section: appends the live contexts of `list`.
    private static func appendLiveContexts(of list: OpaquePointer, to live: inout [UnsafeMutableRawPointer]) {
        let view = oc_list_view(list)
        var index: UInt32 = 0
        while index < view.count {
            if let context = oc_view_context(view, index) {
                if HandlerCell.isCell(context)
                    || Unmanaged<Subscriber>.fromOpaque(context)._withUnsafeGuaranteedRef({ $0.checkLiveness() })
                {
                    live.append(context)
                }
            }
            index &+= 1
        }
    }

    /// Calls `body` with every key that has a list, outside every lock (a
    /// snapshot of the keys; `body` may subscribe or unsubscribe).
    package func forEachKey(_ body: (AnyKeyBox, _ list: OpaquePointer) -> Void) {
        performPendingRemovals()
        withoutActuallyEscaping(body) { body in
            let visitor = KeyVisitor(body)
            withExtendedLifetime(visitor) {
                let status = oc_keymap_for_each(
                    pointer,
                    { entry, argument in
                        guard let argument else { return false }
                        let visitor = Unmanaged<KeyVisitor>.fromOpaque(argument).takeUnretainedValue()
                        let key = Unmanaged<AnyKeyBox>.fromOpaque(entry.pointee.key_context).takeUnretainedValue()
                        visitor.body(key, oc_key_entry_list(entry))
                        return true
                    },
                    Unmanaged.passUnretained(visitor).toOpaque())
                if status == OC_ENOMEM {
                    fatalError("ObserverSwift: out of memory listing keyed observers")
                }
            }
        }
    }

    /// The keys of type `Key` that have a list now, in no order.
    package func keys<Key: Hashable>(of _: Key.Type) -> [Key] {
        var keys: [Key] = []
        forEachKey { box, _ in
            if let box = box as? KeyBox<Key> { keys.append(box.key) }
        }
        return keys
    }

    // MARK: Helpers

    private func withPredicate(
        _ predicate: ((Subscriber) -> Bool)?,
        _ body: (RemovalPredicate.Callback?, UnsafeMutableRawPointer?) -> Void
    ) {
        guard let predicate else { return body(nil, nil) }
        RemovalPredicate.withCallback(predicate) { callback, argument in body(callback, argument) }
    }
}

private final class KeyVisitor {
    package let body: (AnyKeyBox, OpaquePointer) -> Void
    package init(_ body: @escaping (AnyKeyBox, OpaquePointer) -> Void) { self.body = body }
}

/// A keymap whose every box is a `Box`: the only way to add is
/// ``add(_:forKey:)``/``addSlot(_:forKey:)``, so sends and walks borrow each
/// box as a `Box` without a cast.
@usableFromInline
package final class KeyedSlotLists<Box: Subscriber>: AnyKeyedSlotLists, @unchecked Sendable {
    @usableFromInline
    package override init() {}

    /// Stores `box` under `key` (retained until a grace period after its
    /// removal), creating the key's list if needed; returns its handle for
    /// this key. One box may be stored under several keys.
    package func add<Key: Hashable>(_ box: Box, forKey key: Key) -> SlotHandle {
        addBox(box, forKey: key).handle
    }

    /// ``add(_:forKey:)``, returning the entry the box joined (see
    /// ``AnyKeyedSlotLists/remove(_:)``).
    package func addSlot<Key: Hashable>(_ box: Box, forKey key: Key) -> KeyedSlot {
        addBox(box, forKey: key)
    }

    /// Stores `handler`, a plain closure that never ends on its own (no
    /// limit, no target, called on the sending thread), in a ``HandlerCell``
    /// under `key` alone and returns its token. Inlinable: the subscribe +
    /// cancel pair of `KeyedEvent.subscribe(key:_:)`. Only a map whose sends
    /// pass values of type `Value` (``send(_:forKey:value:boxes:)``) may
    /// hold such cells.
    @inlinable
    package func subscribe<Key: Hashable, Value>(_ handler: @escaping (Value) -> Void, forKey key: Key) -> Subscription
    {
        subscription(storedAt: addHandler(handler, forKey: key))
    }

    /// The keyed send path: calls `body` with every box stored under `key`
    /// when the call starts, on this thread, inside one read section, each
    /// borrowed at +0 (as ``SlotList/send(as:_:)``). No key at all costs one
    /// load; an absent key a hash and one probe.
    @inlinable
    @inline(__always)
    package func send<Key: Hashable>(forKey key: Key, _ body: (Box) -> Void) {
        // No section needed to see that nothing is subscribed at all.
        if isEmpty { return }
        let hash = Self.hash(key)
        withReadSection { visit(forKey: key, hash: hash, body) }
    }

    /// ``send(forKey:_:)`` on the C map of a `KeyedSlotLists<Box>`
    /// (`pointer`), for an owner that keeps it alive and reaches it without
    /// a Swift reference (see `KeyedEvent.existingMap`).
    /// Calls each ``HandlerCell`` of `(Value) -> Void` under `key` with
    /// `value` in place, and `body` with each box.
    @inlinable
    @inline(__always)
    package static func send<Key: Hashable, Value>(
        _ map: OpaquePointer, forKey key: Key, value: Value, boxes body: (Box) -> Void
    ) {
        if oc_keymap_is_empty(map) { return }
        let hash = hash(key)
        withReadSection {
            guard let list = list(in: map, forKey: key, hash: hash) else { return }
            forEachVisibleCellOrBox(in: list, value, as: Box.self, body)
        }
    }

    /// ``send(_:forKey:value:boxes:)`` for a caller already inside a read
    /// section (a batch send): looks the key up again on every call, so a
    /// key added or emptied by a handler is seen by the next one.
    @inlinable
    @inline(__always)
    package static func sendInSection<Key: Hashable, Value>(
        _ map: OpaquePointer, forKey key: Key, hash: UInt64, value: Value, boxes body: (Box) -> Void
    ) {
        if oc_keymap_is_empty(map) { return }
        guard let list = list(in: map, forKey: key, hash: hash) else { return }
        forEachVisibleCellOrBox(in: list, value, as: Box.self, body)
    }

    /// The walk of ``send(forKey:_:)``: the boxes of `key`'s list, if it has one.
    /// Inside a read section.
    @inlinable
    @inline(__always)
    package func visit<Key: Hashable>(forKey key: Key, hash: UInt64, _ body: (Box) -> Void) {
        guard let list = list(forKey: key, hash: hash) else { return }
        forEachVisibleBox(in: list, as: Box.self, body)
    }

    /// Calls `body` with every box under `key` visible now (cells skipped),
    /// inside one read section. Not the send path.
    package func forEach<Key: Hashable>(forKey key: Key, _ body: (Box) -> Void) {
        performPendingRemovals()
        let hash = Self.hash(key)
        withReadSection {
            guard let list = list(forKey: key, hash: hash) else { return }
            forEachVisibleSubscriber(in: list) { body(unsafeDowncast($0, to: Box.self)) }
        }
    }

    /// Calls `body` with every key that has a list and each box stored under
    /// it (cells skipped): a box under three keys is visited three times.
    /// Keys are a snapshot taken outside every lock; each key's boxes are
    /// walked inside a read section.
    package func forEachEntry(_ body: (AnyKeyBox, Box) -> Void) {
        forEachKey { key, list in
            withReadSection { forEachVisibleSubscriber(in: list) { body(key, unsafeDowncast($0, to: Box.self)) } }
        }
    }
}

/// Inside a read section: calls `body` with each ``Subscriber`` box of a
/// list (an event's, or a key's in a keymap) visible now, borrowed,
/// skipping ``HandlerCell``s. Not the send path.
package func forEachVisibleSubscriber(in list: OpaquePointer, _ body: (Subscriber) -> Void) {
    let view = oc_list_view(list)
    var index: UInt32 = 0
    while index < view.count {
        if let context = oc_view_context(view, index), !HandlerCell.isCell(context) {
            Unmanaged<Subscriber>.fromOpaque(context)._withUnsafeGuaranteedRef { body($0) }
        }
        index &+= 1
    }
}

/// The lists' release callback: balances `passRetained` in `addBox`, or
/// frees the cell `addHandler` made.
private func releaseKeyedContext(_ context: UnsafeMutableRawPointer) {
    if HandlerCell.isCell(context) { return HandlerCell.destroy(context) }
    Unmanaged<Subscriber>.fromOpaque(context).release()
}
