import ObserverEngine

/// One observer stored by an ``ObserverRegistry``: the writer-side record
/// of the observer and of where it is stored (its slot in each protocol view
/// it conforms to). The registry's identity table holds it; no list does.
///
/// It holds the observer `unowned`, never strongly: the observer's memory
/// (and so its address) stays allocated while the record exists, but the
/// observer itself may be deallocated at any time.
final class RegisteredObserver {
    // Every stored property is immutable or only touched under the owning
    // registry's writer lock.

    /// The observer, held without owning it (see ``UnownedObserver``).
    let observer: UnownedObserver
    let delivery: Delivery
    /// Which registration of the observer this is (see `ObserverRegistration`).
    let generation: UInt64

    /// Its slots in the protocol views it was stored in: the first one
    /// inline (one protocol used, the common case, allocates nothing), the
    /// others in an array made for the second.
    private var firstView: AnyProtocolView?
    private var firstViewHandle = SlotHandle.notAdded
    private var otherViews: [(view: AnyProtocolView, handle: SlotHandle)] = []
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
        if firstView === view { return true }
        for other in otherViews where other.view === view { return true }
        return false
    }

    /// Records its handle in `view` (not recorded before).
    func setViewHandle(_ handle: SlotHandle, in view: AnyProtocolView) {
        if firstView == nil {
            firstView = view
            firstViewHandle = handle
        } else {
            otherViews.append((view, handle))
        }
    }

    /// Forgets every view handle, then calls `body` with each (so `body`
    /// may run code that reaches this record again).
    func takeViewHandles(_ body: (AnyProtocolView, SlotHandle) -> Void) {
        let first = firstView.map { ($0, firstViewHandle) }
        let others = otherViews
        firstView = nil
        firstViewHandle = .notAdded
        otherViews = []
        if let first { body(first.0, first.1) }
        for (view, handle) in others { body(view, handle) }
    }
}
