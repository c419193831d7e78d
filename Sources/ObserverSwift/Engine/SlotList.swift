import CObserverCore
import Synchronization

/// The Swift owner of one C observer list (`oc_list_t`).
///
/// Owners (an `Event`, an observable value, ...) call `removeAll()` in their
/// `deinit`: a `Subscription` token holds its list strongly, so the list can
/// outlive its owner, but the handlers must not.
///
/// Every observer kind in ObserverSwift is a view on a `SlotList`: each slot's
/// context is a retained ``Subscriber`` box, released by the core only
/// after a grace period, so a box is never freed while a sender may still be
/// calling it. Sends borrow boxes at +0 (no retain/release per delivery).
@usableFromInline
final class SlotList: PendingRemovalsHolder, @unchecked Sendable {
    // @unchecked: the C list is internally synchronized (writers take its
    // mutex, readers use epoch sections); `needsSweep` is atomic.

    @usableFromInline
    let pointer: OpaquePointer

    /// Set when an expired box could not be removed at once (its list's
    /// writer lock was busy on the send path). The next writer call, count
    /// or ``ObserverCore/reclaimNow()`` sweeps; a send that meets the box
    /// retries its removal without blocking.
    let needsSweep = Atomic<Bool>(false)

    init() {
        guard let pointer = oc_list_create(releaseSubscriberBox) else {
            fatalError("ObserverSwift: out of memory creating an observer list")
        }
        self.pointer = pointer
    }

    deinit {
        oc_list_destroy(pointer)
    }

    /// Stores `box` (retained by the list until its grace period after removal).
    @usableFromInline
    func add(_ box: Subscriber) -> SlotHandle {
        sweepIfNeeded()
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

    /// Removes the box named by `handle`; false for a stale or foreign
    /// handle, or one whose box has expired (it is swept first).
    @discardableResult
    func remove(_ handle: SlotHandle) -> Bool {
        sweepIfNeeded()
        return oc_list_remove(pointer, handle) == OC_OK
    }

    /// Removes from the send path: never blocks. When the writer lock is busy
    /// the box stays (it is already expired, so it no longer delivers), the
    /// list is marked for a sweep, and false is returned.
    func removeFromSendPath(_ handle: SlotHandle) -> Bool {
        if oc_list_try_remove(pointer, handle) == OC_EBUSY {
            needsSweep.store(true, ordering: .releasing)
            PendingSweeps.register(self)
            return false
        }
        return true
    }

    /// Whether `handle` names a box stored now (expired ones swept first).
    func contains(_ handle: SlotHandle) -> Bool {
        sweepIfNeeded()
        return oc_list_contains(pointer, handle)
    }

    /// Removes every box for which `predicate` is true; returns how many.
    /// `predicate` runs under the list's writer lock and must not call back
    /// into this list.
    @discardableResult
    func removeAll(where predicate: (Subscriber) -> Bool) -> Int {
        sweepIfNeeded()
        return removeAllWithoutSweeping(where: predicate)
    }

    @discardableResult
    private func removeAllWithoutSweeping(where predicate: (Subscriber) -> Bool) -> Int {
        withoutActuallyEscaping(predicate) { predicate in
            let box = PredicateBox(predicate)
            return withExtendedLifetime(box) {
                Int(
                    oc_list_remove_if(
                        pointer,
                        { context, argument in
                            guard let argument else { return false }
                            let predicate = Unmanaged<PredicateBox>.fromOpaque(argument).takeUnretainedValue()
                            let box = Unmanaged<Subscriber>.fromOpaque(context).takeUnretainedValue()
                            return predicate.body(box)
                        },
                        Unmanaged.passUnretained(box).toOpaque()
                    )
                )
            }
        }
    }

    @discardableResult
    func removeAll() -> Int {
        Int(oc_list_clear(pointer))
    }

    /// Boxes stored now, expired ones included.
    var storedCount: Int { Int(oc_list_count(pointer)) }

    /// Removes boxes that expired while the writer lock was busy.
    func sweepIfNeeded() {
        // A plain load first: writers and counts call this every time, and
        // an exchange would write the flag's cache line on each of them.
        if needsSweep.load(ordering: .relaxed) && needsSweep.exchange(false, ordering: .acquiring) {
            removeAllWithoutSweeping(where: { $0.isExpired })
        }
    }

    func performPendingRemovals() { sweepIfNeeded() }

    /// Calls `body` with every box visible to a send starting now, inside one
    /// read section. Not a send path: sends open their own section and call
    /// the inlinable `forEachVisibleBox` directly, specialized for their box.
    func forEachBox(_ body: (Subscriber) -> Void) {
        let reader = oc_read_begin()
        defer { oc_read_end(reader) }
        forEachVisibleBox(in: pointer, as: Subscriber.self, body)
    }

    /// Subscriptions that can still deliver; expires dead ones it finds.
    var liveCount: Int {
        sweepIfNeeded()
        var live = 0
        forEachBox { box in
            if box.checkLiveness() { live += 1 }
        }
        return live
    }
}

private final class PredicateBox {
    let body: (Subscriber) -> Bool
    init(_ body: @escaping (Subscriber) -> Bool) { self.body = body }
}

/// The core's release callback: balances `passRetained` in `SlotList.add`.
private func releaseSubscriberBox(_ context: UnsafeMutableRawPointer) {
    Unmanaged<Subscriber>.fromOpaque(context).release()
}
