import ObserverEngine

/// One observer stored by an ``ObserverRegistry``: the writer-side record
/// of the observer and of where it is stored (its slot in each protocol view
/// it conforms to). The registry's identity table holds it; no list does.
///
/// It holds the observer `unowned`, never strongly: the observer's memory
/// (and so its address) stays allocated while the record exists, but the
/// observer itself may be deallocated at any time.
///
/// A 40-byte object (a 48-byte chunk): the observer, the generation and one
/// reference, ``stored``, which also says how the observer is delivered to
/// and whether it was removed.
final class RegisteredObserver {
    // Every stored property is immutable or only touched under the owning
    // registry's writer lock.

    /// The observer, held without owning it (see ``UnownedObserver``).
    let observer: UnownedObserver
    /// Which registration of the observer this is (see `ObserverRegistration`).
    let generation: UInt64

    /// Where it is stored, one plain reference (so a leak checker can
    /// follow it):
    /// - nil: in no view, synchronous.
    /// - a ``RegistrationInNoView``: in no view, with another delivery.
    /// - the box of its one view (the common case, one protocol used:
    ///   nothing more is allocated); the box's details hold the delivery.
    /// - a ``SeveralViews`` made for the second view, which then holds
    ///   every list and handle, and the delivery.
    /// - ``RemovedRegistration/marker``: removed (final), so that a view
    ///   being built skips it.
    private var stored: AnyObject?

    init(_ observer: AnyObject, delivery: Delivery, generation: UInt64) {
        self.observer = UnownedObserver(observer)
        self.generation = generation
        if case .synchronous = delivery.route {
            stored = nil
        } else {
            stored = RegistrationInNoView(delivery: delivery)
        }
    }

    /// Where the observer's calls run, as it was added (a box's own
    /// delivery may differ: a conformance isolated to an actor runs there).
    var delivery: Delivery {
        guard let stored else { return .synchronous }
        if let box = stored as? AnyConformingObserver { return box.details.registeredDelivery }
        if let several = stored as? SeveralViews { return several.delivery }
        if let inNoView = stored as? RegistrationInNoView { return inNoView.delivery }
        return .synchronous
    }

    /// Whether it was removed from its registry (a view being built skips it).
    var isRemoved: Bool { stored === RemovedRegistration.marker }

    /// A strong reference to the observer, or nil once it is deallocating.
    func strongObserver() -> AnyObject? { observer.strongObserver() }

    /// Whether it is stored in `view`.
    func isInView(_ view: AnyProtocolView) -> Bool {
        guard let stored else { return false }
        if let box = stored as? AnyConformingObserver { return box.list === view.slots }
        if let several = stored as? SeveralViews {
            return several.handles.contains { $0.list === view.slots }
        }
        return false
    }

    /// Records that `box` stores it in `view` (not recorded before, not
    /// removed); the box's handle is set.
    func recordStored(_ box: AnyConformingObserver, in view: AnyProtocolView) {
        guard let stored, !(stored is RegistrationInNoView) else {
            self.stored = box
            return
        }
        let handle = box.handle ?? .notAdded
        if let several = stored as? SeveralViews {
            several.handles.append((view.slots, handle))
            return
        }
        let first = unsafeDowncast(stored, to: AnyConformingObserver.self)
        self.stored = SeveralViews(
            delivery: first.details.registeredDelivery,
            [(first.list, first.handle ?? .notAdded), (view.slots, handle)])
    }

    /// Marks it removed (it is stored in no view again), then calls `body`
    /// with each list and handle it was stored in (so `body` may run code
    /// that reaches this record again). Does nothing when it was removed
    /// already.
    func remove(_ body: (AnySlotList, SlotHandle) -> Void) {
        guard !isRemoved else { return }
        let taken = stored
        stored = RemovedRegistration.marker
        if let several = taken as? SeveralViews {
            for (list, handle) in several.handles { body(list, handle) }
        } else if let box = taken as? AnyConformingObserver, let handle = box.handle {
            body(box.list, handle)
        }
    }
}

/// The delivery of a ``RegisteredObserver`` stored in no protocol view yet,
/// when it is not synchronous (a synchronous one needs no object).
private final class RegistrationInNoView {
    let delivery: Delivery

    init(delivery: Delivery) {
        self.delivery = delivery
    }
}

/// The lists and handles of a ``RegisteredObserver`` stored in more than
/// one protocol view, and its delivery. Only touched under the registry's
/// writer lock.
private final class SeveralViews {
    let delivery: Delivery
    var handles: [(list: AnySlotList, handle: SlotHandle)]

    init(delivery: Delivery, _ handles: [(list: AnySlotList, handle: SlotHandle)]) {
        self.delivery = delivery
        self.handles = handles
    }
}

/// What a removed ``RegisteredObserver`` stores: one object for every
/// registry, never released.
private final class RemovedRegistration: Sendable {
    static let marker = RemovedRegistration()
}
