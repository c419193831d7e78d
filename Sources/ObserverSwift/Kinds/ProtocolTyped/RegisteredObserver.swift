import ObserverEngine

/// One observer stored by an ``ObserverRegistry``: the writer-side record
/// of the observer and of where it is stored (its slot in each protocol view
/// it conforms to). The registry's identity table holds it; no list does.
///
/// It holds the observer `unowned`, never strongly: the observer's memory
/// (and so its address) stays allocated while the record exists, but the
/// observer itself may be deallocated at any time.
///
/// A 49-byte object (a 64-byte chunk): stored in one view, it keeps that
/// view's box, which knows its list and handle.
final class RegisteredObserver {
    // Every stored property is immutable or only touched under the owning
    // registry's writer lock.

    /// The observer, held without owning it (see ``UnownedObserver``).
    let observer: UnownedObserver
    let delivery: Delivery
    /// Which registration of the observer this is (see `ObserverRegistration`).
    let generation: UInt64

    /// Where it is stored: nil (in no view), the box of its one view (the
    /// common case, one protocol used: nothing more is allocated), or a
    /// ``SeveralViews`` made for the second view, which then holds every
    /// list and handle. A plain reference either way, so a leak checker
    /// can follow it.
    private var stored: AnyObject?
    /// Set once removed, so that a view being built skips it.
    var isRemoved = false

    init(_ observer: AnyObject, delivery: Delivery, generation: UInt64) {
        self.observer = UnownedObserver(observer)
        self.delivery = delivery
        self.generation = generation
    }

    /// A strong reference to the observer, or nil once it is deallocating.
    func strongObserver() -> AnyObject? { observer.strongObserver() }

    /// Whether it is stored in `view`.
    func isInView(_ view: AnyProtocolView) -> Bool {
        guard let stored else { return false }
        if let several = stored as? SeveralViews {
            return several.handles.contains { $0.list === view.slots }
        }
        return unsafeDowncast(stored, to: AnyConformingObserver.self).list === view.slots
    }

    /// Records that `box` stores it in `view` (not recorded before); the
    /// box's handle is set.
    func recordStored(_ box: AnyConformingObserver, in view: AnyProtocolView) {
        guard let stored else {
            self.stored = box
            return
        }
        let handle = box.handle ?? .notAdded
        if let several = stored as? SeveralViews {
            several.handles.append((view.slots, handle))
            return
        }
        let first = unsafeDowncast(stored, to: AnyConformingObserver.self)
        self.stored = SeveralViews([(first.list, first.handle ?? .notAdded), (view.slots, handle)])
    }

    /// Forgets where it is stored, then calls `body` with each list and
    /// handle (so `body` may run code that reaches this record again).
    func takeViewHandles(_ body: (AnySlotList, SlotHandle) -> Void) {
        guard let taken = stored else { return }
        stored = nil
        if let several = taken as? SeveralViews {
            for (list, handle) in several.handles { body(list, handle) }
        } else {
            let box = unsafeDowncast(taken, to: AnyConformingObserver.self)
            if let handle = box.handle { body(box.list, handle) }
        }
    }
}

/// The lists and handles of a ``RegisteredObserver`` stored in more than
/// one protocol view. Only touched under the registry's writer lock.
private final class SeveralViews {
    var handles: [(list: AnySlotList, handle: SlotHandle)]

    init(_ handles: [(list: AnySlotList, handle: SlotHandle)]) {
        self.handles = handles
    }
}
