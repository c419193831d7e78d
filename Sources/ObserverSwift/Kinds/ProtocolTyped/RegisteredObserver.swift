import ObserverEngine

/// One observer stored by an ``ObserverRegistry``: the writer-side record
/// of the observer and of where it is stored (its slot in each protocol view
/// it conforms to). The registry's identity table holds it; no list does.
///
/// It holds the observer `unowned`, never strongly: the observer's memory
/// (and so its address) stays allocated while the record exists, but the
/// observer itself may be deallocated at any time.
///
/// A 72-byte object (an 80-byte chunk): the first view's handle is kept as
/// its two fields, so that the removal flag fits the 4 bytes a
/// `SlotHandle` would leave as padding.
final class RegisteredObserver {
    // Every stored property is immutable or only touched under the owning
    // registry's writer lock.

    /// The observer, held without owning it (see ``UnownedObserver``).
    let observer: UnownedObserver
    let delivery: Delivery
    /// Which registration of the observer this is (see `ObserverRegistration`).
    let generation: UInt64

    /// The protocol views it is stored in: nil (none), the one view (the
    /// common case, one protocol used: its handle is inline, nothing more
    /// is allocated), or a ``SeveralViews`` made for the second view, which
    /// then holds every view and handle. A plain reference either way, so a
    /// leak checker can follow it.
    private var views: AnyObject?
    /// The handle in the one view (unused once `views` is several).
    private var firstHandleSequence: UInt64 = 0
    private var firstHandleIndex: UInt32 = 0
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
        guard let views else { return false }
        if views === view { return true }
        guard let several = views as? SeveralViews else { return false }
        return several.handles.contains { $0.view === view }
    }

    /// Records its handle in `view` (not recorded before).
    func setViewHandle(_ handle: SlotHandle, in view: AnyProtocolView) {
        guard let views else {
            self.views = view
            (firstHandleSequence, firstHandleIndex) = (handle.sequence, handle.index)
            return
        }
        if let several = views as? SeveralViews {
            several.handles.append((view, handle))
            return
        }
        let first = unsafeDowncast(views, to: AnyProtocolView.self)
        self.views = SeveralViews([
            (first, SlotHandle(sequence: firstHandleSequence, index: firstHandleIndex)), (view, handle),
        ])
    }

    /// Forgets every view handle, then calls `body` with each (so `body`
    /// may run code that reaches this record again).
    func takeViewHandles(_ body: (AnyProtocolView, SlotHandle) -> Void) {
        guard let taken = views else { return }
        views = nil
        if let several = taken as? SeveralViews {
            for (view, handle) in several.handles { body(view, handle) }
        } else {
            body(
                unsafeDowncast(taken, to: AnyProtocolView.self),
                SlotHandle(sequence: firstHandleSequence, index: firstHandleIndex))
        }
    }
}

/// The views and handles of a ``RegisteredObserver`` stored in more than one
/// protocol view. Only touched under the registry's writer lock.
private final class SeveralViews {
    var handles: [(view: AnyProtocolView, handle: SlotHandle)]

    init(_ handles: [(view: AnyProtocolView, handle: SlotHandle)]) {
        self.handles = handles
    }
}
