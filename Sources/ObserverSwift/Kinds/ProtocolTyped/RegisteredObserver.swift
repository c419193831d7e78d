import ObserverEngine

/// One observer stored by an ``ObserverRegistry``: the writer-side record
/// of the observer and of where it is stored (its slot in each protocol view
/// it conforms to). The registry's identity table holds it; no list does.
/// An observer stored in exactly one view is held as that view's box alone
/// once the store that stored it ends (see `StoredRegistration`; a store
/// nested in another leaves it a record), and gets a record again when a
/// new view is filled.
///
/// It holds the observer `unowned`, never strongly: the observer's memory
/// (and so its address) stays allocated while the record exists, but the
/// observer itself may be deallocated at any time.
///
/// A 40-byte object (a 48-byte chunk): the observer, the generation (0 once
/// removed) and one reference, ``stored``, which also says where the
/// observer is delivered.
final class RegisteredObserver {
    // Every stored property is immutable or only touched under the owning
    // registry's writer lock.

    /// The observer, held without owning it (see ``UnownedObserver``).
    let observer: UnownedObserver
    /// Which registration of the observer this is (see
    /// `ObserverRegistration`); registries give generations from 1, and 0
    /// marks the record removed (a view being built skips it).
    private(set) var generation: UInt64

    /// Where it is stored, one plain reference (so a leak checker can
    /// follow it):
    /// - nil: in no view, synchronous.
    /// - the box of its one view (the common case, one protocol used:
    ///   nothing more is allocated); the box's details hold the delivery.
    /// - a ``ViewPlacements``: in no view with another delivery, or in
    ///   several views (made for the second), with every list and handle.
    private var stored: AnyObject?

    init(_ observer: AnyObject, delivery: Delivery, generation: UInt64) {
        precondition(generation != 0, "ObserverRegistry: generation 0 marks a removed record")
        self.observer = UnownedObserver(observer)
        self.generation = generation
        if case .synchronous = delivery.route {
            stored = nil
        } else {
            stored = ViewPlacements(delivery: delivery, [])
        }
    }

    /// `stored` as a ``ViewPlacements``, or nil when it is none (nil or a
    /// box). One comparison of the object's type (a cast would ask the
    /// runtime).
    private var placements: ViewPlacements? {
        guard let stored, ObjectIdentifier(type(of: stored)) == ObjectIdentifier(ViewPlacements.self) else {
            return nil
        }
        return unsafeDowncast(stored, to: ViewPlacements.self)
    }

    /// Where the observer's calls run, as it was added (a box's own
    /// delivery may differ: a conformance isolated to an actor runs there).
    var delivery: Delivery {
        guard let stored else { return .synchronous }
        if let placements { return placements.delivery }
        return unsafeDowncast(stored, to: AnyConformingObserver.self).details.registeredDelivery
    }

    /// Whether it was removed from its registry (a view being built skips it).
    var isRemoved: Bool { generation == 0 }

    /// The record of the observer `box` alone held (stored in its one view).
    init(expanding box: AnyConformingObserver) {
        self.observer = box.observer
        self.generation = box.generation
        self.stored = box
    }

    /// The box of its one view, or nil when it is in no view or in several.
    var soleBox: AnyConformingObserver? {
        guard let stored, placements == nil else { return nil }
        return unsafeDowncast(stored, to: AnyConformingObserver.self)
    }

    /// A strong reference to the observer, or nil once it is deallocating.
    func strongObserver() -> AnyObject? { observer.strongObserver() }

    /// Whether it is stored in `view`.
    func isInView(_ view: AnyProtocolView) -> Bool {
        guard let stored else { return false }
        if let placements { return placements.handles.contains { $0.list === view.slots } }
        return unsafeDowncast(stored, to: AnyConformingObserver.self).list === view.slots
    }

    /// Records that `box` stores it in `view` (not recorded before, not
    /// removed); the box's handle is set.
    func recordStored(_ box: AnyConformingObserver, in view: AnyProtocolView) {
        guard let stored else {
            self.stored = box
            return
        }
        if let placements {
            if placements.handles.isEmpty {
                // In no view until now: the box's details keep the delivery.
                self.stored = box
            } else {
                placements.handles.append((view.slots, box.handle ?? .notAdded))
            }
            return
        }
        let first = unsafeDowncast(stored, to: AnyConformingObserver.self)
        self.stored = ViewPlacements(
            delivery: first.details.registeredDelivery,
            [(first.list, first.handle ?? .notAdded), (view.slots, box.handle ?? .notAdded)])
    }

    /// Marks it removed (it is stored in no view again), then calls `body`
    /// with each list and handle it was stored in (so `body` may run code
    /// that reaches this record again). Does nothing when it was removed
    /// already.
    func remove(_ body: (AnySlotList, SlotHandle) -> Void) {
        guard !isRemoved else { return }
        generation = 0
        guard let taken = stored else { return }
        let placements = self.placements
        stored = nil
        if let placements {
            for (list, handle) in placements.handles { body(list, handle) }
        } else {
            let box = unsafeDowncast(taken, to: AnyConformingObserver.self)
            if let handle = box.handle { body(box.list, handle) }
        }
    }
}

/// Where a ``RegisteredObserver`` is stored when that is not one box: in no
/// view, with a delivery other than synchronous (no handles), or in more
/// than one view (every list and handle). Keeps the delivery the observer
/// was added with. Only touched under the registry's writer lock.
private final class ViewPlacements {
    let delivery: Delivery
    var handles: [(list: AnySlotList, handle: SlotHandle)]

    init(delivery: Delivery, _ handles: [(list: AnySlotList, handle: SlotHandle)]) {
        self.delivery = delivery
        self.handles = handles
    }
}
