import CObserverCore

/// The Swift owner of one C observer list (`oc_list_t`), typed by nothing:
/// what a token, an expiry or a sweep needs to remove a box by its handle.
/// Every list is created as a ``SlotList``, which fixes the type of its boxes.
///
/// Owners (an `Event`, an observable value, ...) call `removeAll()` in their
/// `deinit`: a `Subscription` token holds its list strongly, so the list can
/// outlive its owner, but the handlers must not.
///
/// Each slot's context is a retained ``Subscriber`` box or, in an `Event`'s
/// list, a ``HandlerCell`` (a plain closure without an object), released by
/// the core only after a grace period, so neither is freed while a sender
/// may still be calling it. Sends borrow boxes at +0 (no retain/release per
/// delivery). A cell has no target, never expires and is always live: the
/// walks below skip cells where they look for targets or expired boxes, and
/// count them as live.
@usableFromInline
package class AnySlotList: PendingRemovalsHolder, SlotListWordsOwner, @unchecked Sendable {
    // @unchecked: the C list is internally synchronized (writers take its
    // writer lock, readers use epoch sections); `needsSweep` is atomic.

    /// First stored property (see ``SlotListWordsOwner``).
    package var words = SlotListWords()

    @usableFromInline
    package let pointer: OpaquePointer

    /// Slots one ``sweepDeadTargetsStep()`` examines. Each subscribe and each
    /// cancel takes one step, and adds at most one box: with S slots in use, a
    /// box whose target died is found within S / 4 writer calls, during
    /// which at most S / 4 boxes were added, so boxes of dead targets stay
    /// below a third of the live ones plus a few (see `DeadTargetSweepTests`).
    package static var sweepStride: UInt32 { 4 }

    fileprivate init() {
        guard let pointer = oc_list_create(releaseSubscriberBox) else {
            fatalError("ObserverSwift: out of memory creating an observer list")
        }
        self.pointer = pointer
    }

    deinit {
        oc_list_destroy(pointer)
    }

    /// Stores `box` (retained by the list until its grace period after
    /// removal). Only ``SlotList/add(_:)`` calls it, with a box of its type.
    fileprivate func addBox(_ box: Subscriber) -> SlotHandle {
        sweepIfNeeded()
        if box.expiresWithTarget {
            if !holdsTargets.load(ordering: .relaxed) { holdsTargets.store(true, ordering: .relaxed) }
        }
        sweepDeadTargetsStep()
        let context = Unmanaged.passRetained(box).toOpaque()
        var handle = SlotHandle.notAdded
        let status = oc_list_add(pointer, context, &handle)
        guard status == OC_OK else {
            Unmanaged<Subscriber>.fromOpaque(context).release()
            fatalError("ObserverSwift: cannot add an observer: \(String(cString: oc_status_string(status)))")
        }
        box.didAdd(handle: handle)
        return handle
    }

    /// Stores `handler` in a ``HandlerCell`` (freed by the list after its
    /// grace period once removed) and returns its handle.
    /// Inlined, so that the closure goes into its cell as the caller holds
    /// it (an unspecialized call would wrap it in a reabstraction thunk, an
    /// allocation of its own).
    @inlinable
    package func addHandler<Value>(_ handler: @escaping (Value) -> Void) -> SlotHandle {
        addCell(HandlerCell.make(handler))
    }

    /// Stores the cell `context` (tagged, see ``HandlerCell``); frees it and
    /// stops the process when the core cannot store it.
    @usableFromInline
    package func addCell(_ context: UnsafeMutableRawPointer) -> SlotHandle {
        sweepIfNeeded()
        sweepDeadTargetsStep()
        var handle = SlotHandle.notAdded
        let status = oc_list_add(pointer, context, &handle)
        guard status == OC_OK else {
            HandlerCell.destroy(context)
            fatalError("ObserverSwift: cannot add an observer: \(String(cString: oc_status_string(status)))")
        }
        return handle
    }

    /// Removes the box named by `handle`; false for a stale or foreign
    /// handle, or one whose box has expired (it is swept first).
    @discardableResult
    package func remove(_ handle: SlotHandle) -> Bool {
        sweepIfNeeded()
        let removed = oc_list_remove(pointer, handle) == OC_OK
        sweepDeadTargetsStep()
        return removed
    }

    /// One step of the amortized sweep of dead targets, taken by every
    /// subscribe and cancel of a list that has held a target's box: looks at
    /// the next ``sweepStride`` slots (round the list, from `sweepCursor`)
    /// and ends the subscriptions whose target has been deallocated, which
    /// frees their slots and, after a grace period, their boxes and the
    /// dead targets' memory (a box's unowned reference keeps it). So a
    /// source that is never sent to nor counted does not keep dead targets.
    ///
    /// Runs in a read section, outside every lock; the probe takes no
    /// reference to a target (see ``Subscriber/expireIfTargetIsGone()``).
    /// Concurrent writers may step over the same slots; the cursor is only
    /// a hint.
    @inline(__always)
    package func sweepDeadTargetsStep() {
        if holdsTargets.load(ordering: .relaxed) { sweepDeadTargetsStepNow() }
    }

    /// ``sweepDeadTargetsStep()`` once the list has held a target's box: kept
    /// out of line, so that the writer calls of a list that never held one
    /// pay only the flag's load.
    @inline(never)
    private func sweepDeadTargetsStepNow() {
        let start = sweepCursor.load(ordering: .relaxed)
        let next = withReadSection { () -> UInt32 in
            let view = oc_list_view(pointer)
            guard view.count > 0 else { return 0 }
            var index = start < view.count ? start : 0
            for _ in 0..<min(Self.sweepStride, view.count) {
                if let context = oc_view_context(view, index), !HandlerCell.isCell(context) {
                    Unmanaged<Subscriber>.fromOpaque(context)._withUnsafeGuaranteedRef { box in
                        // Expires (and removes without blocking) a box whose target died.
                        box.expireIfTargetIsGone()
                    }
                }
                index = index &+ 1 == view.count ? 0 : index &+ 1
            }
            return index
        }
        sweepCursor.store(next, ordering: .relaxed)
    }

    /// Removes from the send path: never blocks. When the writer lock is busy
    /// the box stays (it is already expired, so it no longer delivers), the
    /// list is marked for a sweep, and false is returned.
    package func removeFromSendPath(_ handle: SlotHandle) -> Bool {
        if oc_list_try_remove(pointer, handle) == OC_EBUSY {
            needsSweep.store(true, ordering: .releasing)
            PendingSweeps.register(self)
            return false
        }
        return true
    }

    /// Whether `handle` names a box stored now (expired ones swept first).
    package func contains(_ handle: SlotHandle) -> Bool {
        sweepIfNeeded()
        return oc_list_contains(pointer, handle)
    }

    /// Removes every box for which `predicate` is true; returns how many.
    /// `predicate` runs under the list's writer lock and must not call back
    /// into this list. A cell is asked as ``HandlerCell/asSubscriber`` (no
    /// target, never expired), so it goes with the plain closure boxes.
    @discardableResult
    package func removeAll(where predicate: (Subscriber) -> Bool) -> Int {
        sweepIfNeeded()
        return removeAllWithoutSweeping(where: predicate)
    }

    @discardableResult
    private func removeAllWithoutSweeping(where predicate: (Subscriber) -> Bool) -> Int {
        RemovalPredicate.withCallback(predicate) { callback, argument in
            Int(oc_list_remove_if(pointer, callback, argument))
        }
    }

    @discardableResult
    package func removeAll() -> Int {
        Int(oc_list_clear(pointer))
    }

    /// Boxes stored now, expired ones included.
    package var storedCount: Int { Int(oc_list_count(pointer)) }

    /// Removes boxes that expired while the writer lock was busy.
    @inline(__always)
    package func sweepIfNeeded() {
        // A plain load first, inlined: writers and counts call this every
        // time, and an exchange would write the flag's cache line on each.
        if needsSweep.load(ordering: .relaxed) { sweepNow() }
    }

    /// ``sweepIfNeeded()`` once the flag was seen set (out of line: rare).
    @inline(never)
    private func sweepNow() {
        if needsSweep.exchange(false, ordering: .acquiring) {
            removeAllWithoutSweeping(where: { $0.isExpired })
        }
    }

    package func performPendingRemovals() { sweepIfNeeded() }

    /// Calls `body` with every box visible to a send starting now, inside one
    /// read section (cells skipped). Not a send path (see
    /// ``SlotList/send(as:_:)``).
    package func forEachBox(_ body: (Subscriber) -> Void) {
        withReadSection { forEachVisibleSubscriber(in: pointer, body) }
    }

    /// Subscriptions that can still deliver (every cell, and the boxes whose
    /// ``Subscriber/checkLiveness()`` says so); expires dead ones it finds.
    package var liveCount: Int {
        sweepIfNeeded()
        var live = 0
        withReadSection {
            let view = oc_list_view(pointer)
            var index: UInt32 = 0
            while index < view.count {
                if let context = oc_view_context(view, index) {
                    if HandlerCell.isCell(context) {
                        live += 1
                    } else if Unmanaged<Subscriber>.fromOpaque(context)._withUnsafeGuaranteedRef({ $0.checkLiveness() })
                    {
                        live += 1
                    }
                }
                index &+= 1
            }
        }
        return live
    }
}

/// A slot list whose every box is a `Box`: the only way to add is
/// ``add(_:)``, so sends and walks borrow each box as a `Box` without a cast.
@usableFromInline
package final class SlotList<Box: Subscriber>: AnySlotList, @unchecked Sendable {
    @usableFromInline
    package override init() {}

    /// Stores `box` and returns its handle.
    @usableFromInline
    package func add(_ box: Box) -> SlotHandle { addBox(box) }

    /// Whether nothing is stored; needs no read section.
    @inlinable
    package var isEmpty: Bool { oc_list_is_empty(pointer) }

    /// The send path: calls `body` with every box stored when the call
    /// starts, on this thread, inside one read section entered on `reader`
    /// (the calling thread's), in slot order, each borrowed at +0. An empty
    /// list costs one load and no section.
    ///
    /// `body` may reenter anything (send again, add, remove); a box added
    /// meanwhile is not visited, one removed meanwhile may still be.
    @inlinable
    @inline(__always)
    package func send(as reader: SectionReader, _ body: (Box) -> Void) {
        if isEmpty { return }
        reader.begin()
        forEachVisibleBox(in: pointer, as: Box.self, body)
        reader.end()
    }

    /// ``send(as:_:)`` on the C list of a `SlotList<Box>` (`pointer`) that
    /// may hold ``HandlerCell``s of `(Value) -> Void` (an `Event`'s), for an
    /// owner that keeps the list alive and reaches it without a Swift
    /// reference (see `EventObservers.existingList`): calls each cell's
    /// closure with `value` in place, and `body` with each box.
    @inlinable
    @inline(__always)
    package static func send<Value>(
        _ value: Value, to list: OpaquePointer, as reader: SectionReader, boxes body: (Box) -> Void
    ) {
        if oc_list_is_empty(list) { return }
        reader.begin()
        forEachVisibleCellOrBox(in: list, value, as: Box.self, body)
        reader.end()
    }

    /// ``send(_:to:as:boxes:)`` for a caller already inside a read section.
    @inlinable
    @inline(__always)
    package static func sendInSection<Value>(_ value: Value, to list: OpaquePointer, boxes body: (Box) -> Void) {
        if oc_list_is_empty(list) { return }
        forEachVisibleCellOrBox(in: list, value, as: Box.self, body)
    }

    /// ``send(as:_:)`` on the calling thread's reader.
    @inlinable
    @inline(__always)
    package func send(_ body: (Box) -> Void) {
        send(as: .current, body)
    }

    /// ``send(as:_:)`` for a caller already inside a read section (a batch
    /// send, a notification round): neither enters nor leaves one.
    @inlinable
    @inline(__always)
    package func sendInSection(_ body: (Box) -> Void) {
        if isEmpty { return }
        forEachVisibleBox(in: pointer, as: Box.self, body)
    }

    /// Calls `body` with every box visible now, inside one read section
    /// (not a send path: not inlined).
    package func forEach(_ body: (Box) -> Void) {
        withReadSection { forEachVisibleBox(in: pointer, as: Box.self, body) }
    }

    /// For a caller inside a read section: the one ``HandlerCell`` of
    /// `(Value) -> Void` a send starting now would call, when there is
    /// exactly one context and it is a cell; nil when there are none,
    /// several, or one box. Stops scanning at a second visible context.
    @inlinable
    @inline(__always)
    package func soleVisibleHandler<Value>(of _: Value.Type) -> SoleVisibleHandler<Value>? {
        if isEmpty { return nil }
        let view = oc_list_view(pointer)
        var found: (context: UnsafeMutableRawPointer, index: UInt32)?
        var index: UInt32 = 0
        while index < view.count {
            if let context = oc_view_context(view, index) {
                if found != nil { return nil }
                found = (context, index)
            }
            index &+= 1
        }
        guard let found, HandlerCell.isCell(found.context) else { return nil }
        return SoleVisibleHandler(
            cell: HandlerCell.contents(found.context, as: Value.self), context: found.context,
            index: found.index, slots: view.slots, sequence: view.sequence)
    }

    /// Whether a send starting now would still call `sole`'s box and nothing
    /// else (same read section as ``soleVisibleHandler(of:)``).
    ///
    /// The list's published sequence grows with every add, so an unchanged
    /// sequence means no box became visible; the same slot array still
    /// holding the box in its slot means it was not removed. The array
    /// cannot be freed and its address reused within the section, which is
    /// what makes comparing its address sound.
    @inlinable
    @inline(__always)
    package func stillHasOnly<Value>(_ sole: SoleVisibleHandler<Value>) -> Bool {
        let view = oc_list_view(pointer)
        return view.sequence == sole.sequence && view.slots == sole.slots && sole.index < view.count
            && oc_view_context(view, sole.index) == sole.context
    }
}

/// The one cell a slot list's sends call, as found inside a read section by
/// ``SlotList/soleVisibleHandler(of:)``: valid only within that section, and
/// only while ``SlotList/stillHasOnly(_:)`` says so.
@usableFromInline
package struct SoleVisibleHandler<Value> {
    /// The cell: the section keeps it alive.
    @usableFromInline package let cell: UnsafeMutablePointer<HandlerCellContents<Value>>
    @usableFromInline package let context: UnsafeMutableRawPointer
    @usableFromInline package let index: UInt32
    @usableFromInline package let slots: UnsafePointer<oc_slot>
    @usableFromInline package let sequence: UInt64

    @inlinable
    package init(
        cell: UnsafeMutablePointer<HandlerCellContents<Value>>, context: UnsafeMutableRawPointer, index: UInt32,
        slots: UnsafePointer<oc_slot>, sequence: UInt64
    ) {
        self.cell = cell
        self.context = context
        self.index = index
        self.slots = slots
        self.sequence = sequence
    }
}

/// The predicate of one `oc_list_remove_if` / `oc_keymap_remove_if` call,
/// passed to the C callback by address.
package final class RemovalPredicate {
    package let body: (Subscriber) -> Bool
    package init(_ body: @escaping (Subscriber) -> Bool) { self.body = body }

    /// The C form of a removal predicate: a callback over slot contexts,
    /// and the argument to pass it.
    package typealias Callback = @convention(c) (UnsafeMutableRawPointer, UnsafeMutableRawPointer?) -> Bool

    /// Calls `body` with a C callback and its argument that ask `predicate`
    /// about each slot's box, both valid only during `body`. A cell is
    /// asked as ``HandlerCell/asSubscriber`` (a subscription with no target
    /// that never expires).
    package static func withCallback<Result>(
        _ predicate: (Subscriber) -> Bool, _ body: (Callback, UnsafeMutableRawPointer) -> Result
    ) -> Result {
        withoutActuallyEscaping(predicate) { predicate in
            let box = RemovalPredicate(predicate)
            return withExtendedLifetime(box) {
                body(
                    { context, argument in
                        guard let argument else { return false }
                        let predicate = Unmanaged<RemovalPredicate>.fromOpaque(argument).takeUnretainedValue()
                        if HandlerCell.isCell(context) { return predicate.body(HandlerCell.asSubscriber) }
                        let box = Unmanaged<Subscriber>.fromOpaque(context).takeUnretainedValue()
                        return predicate.body(box)
                    },
                    Unmanaged.passUnretained(box).toOpaque())
            }
        }
    }
}

/// The core's release callback: balances `passRetained` in `AnySlotList.addBox`,
/// or frees the cell `AnySlotList.addHandler` made.
private func releaseSubscriberBox(_ context: UnsafeMutableRawPointer) {
    if HandlerCell.isCell(context) { return HandlerCell.destroy(context) }
    Unmanaged<Subscriber>.fromOpaque(context).release()
}
