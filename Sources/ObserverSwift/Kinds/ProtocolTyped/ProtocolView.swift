import ObserverEngine

/// The registered observers that conform to one protocol, as a list on the
/// C core. Type-erased root, so the registry can keep views of any `P`.
@usableFromInline
class AnyProtocolView: @unchecked Sendable {
    // @unchecked: `slots` is internally synchronized; the flag's word is only
    // accessed atomically; the rest is immutable.

    /// First stored property: `holdsObserversCalledElsewhere`'s word (see
    /// `AtomicWord`).
    var holdsObserversCalledElsewhereWord = AtomicWordStorage<Bool>(false)
    /// Set (never cleared) before the first observer whose delivery is not
    /// synchronous is stored in this view, so that a call that finds it
    /// false has only synchronous observers to call. Set under the
    /// registry's writer lock, before the store publishes the observer.
    @usableFromInline var holdsObserversCalledElsewhere: AtomicWord<Bool> { AtomicWords.first(self) }

    /// The view's list, untyped: what the registry removes handles from.
    let slots: AnySlotList

    init(slots: AnySlotList) {
        self.slots = slots
    }

    /// Casts `observer` once and, when it conforms, stores it in this view.
    /// Returns the box stored (its handle recorded in it), or nil when it
    /// does not conform (or is dead).
    func addIfConforming(_ observer: RegisteredObserver) -> AnyConformingObserver? { nil }
}

/// The view of observers conforming to `P`: what `withObservers` for `P`
/// iterates.
@usableFromInline
final class ProtocolView<P>: AnyProtocolView, @unchecked Sendable {
    /// The same list as `slots`, typed: every box is a `ConformingObserver<P>`.
    @usableFromInline
    let conforming: SlotList<ConformingObserver<P>>

    /// The flag its boxes set when they find their observer deallocated.
    let deadFlag: DeadObserverFlag

    /// The details the common boxes of each cast witness word (of each
    /// conforming class) share (see ``ConformingObserverDetails``). Only
    /// touched under the registry's writer lock.
    @exclusivity(unchecked)
    private var commonDetailsByWitness: [ConformingObserverWitness: ConformingObserverDetails] = [:]
    /// The details ``commonDetails(for:)`` returned last.
    @exclusivity(unchecked)
    private var lastCommonDetails: ConformingObserverDetails?

    init(deadFlag: DeadObserverFlag) {
        self.conforming = SlotList<ConformingObserver<P>>()
        self.deadFlag = deadFlag
        super.init(slots: conforming)
    }

    /// The details shared by the common boxes whose cast's witness word is
    /// `witness`, made on first use. Registry writer lock held.
    func commonDetails(for witness: ConformingObserverWitness) -> ConformingObserverDetails {
        // Observers of one class often come in a row: the last answer first.
        if let last = lastCommonDetails, last.witness == witness { return last }
        let details: ConformingObserverDetails
        if let existing = commonDetailsByWitness[witness] {
            details = existing
        } else {
            details = ConformingObserverDetails(commonTo: deadFlag, list: conforming, witness: witness)
            commonDetailsByWitness[witness] = details
        }
        lastCommonDetails = details
        return details
    }

    override func addIfConforming(_ observer: RegisteredObserver) -> AnyConformingObserver? {
        guard let box = ConformingObserver<P>.make(for: observer, in: self) else { return nil }
        if !box.isSynchronous { holdsObserversCalledElsewhere.store(true, ordering: .releasing) }
        _ = conforming.add(box)
        return box
    }

    /// Calls `body` with every conforming observer stored when the send
    /// starts, each where its delivery says (the `Event.send` pattern:
    /// lock-free, boxes borrowed at +0).
    @inlinable
    func send(_ body: @escaping @Sendable (P) -> Void) {
        conforming.send { $0.deliver(body) }
    }

    /// Calls `body` on this thread with every conforming observer whose
    /// delivery allows a call here and now (see
    /// ``ConformingObserver/mayBeCalledHere``); returns how many observers
    /// it could not call (their delivery needs `body` later, elsewhere).
    ///
    /// A view that never held an observer called elsewhere takes the loop
    /// without counting. An observer that makes it hold one while this
    /// call runs was added during the call, so the call need not reach it
    /// (``ObserverRegistry``'s threading rules): the loop skips it. Every
    /// observer stored before the call started is seen by the flag's load
    /// (the flag is set before the observer is published, and this call's
    /// view and pending-adds loads acquire what that publication released).
    @inlinable @inline(__always)
    func sendHere(_ body: (P) -> Void) -> Int {
        guard holdsObserversCalledElsewhere.load(ordering: .relaxed) else {
            conforming.send { observer in
                if observer.isSynchronous { observer.callIfAlive(body) }
            }
            return 0
        }
        return sendHereCounting(body)
    }

    /// ``sendHere(_:)`` for a view that holds observers called elsewhere:
    /// calls those it may call here, counts the others.
    @inlinable @inline(__always)
    func sendHereCounting(_ body: (P) -> Void) -> Int {
        var notCalled = 0
        conforming.send { observer in
            if observer.mayBeCalledHere {
                observer.callIfAlive(body)
            } else {
                notCalled &+= 1
            }
        }
        return notCalled
    }
}

/// One entry of a registry's lock-free list of views, keyed by the
/// protocol type's identity. Made (unlinked) when its view is made; `next`
/// is set once, under the registry's writer lock, before the node is
/// published, and never changes afterwards: readers, who reach the node
/// only through that publication (acquiring), see it immutable. Nodes live
/// as long as their registry (which keeps them), so readers walk them
/// without retaining.
@usableFromInline
final class ProtocolViewNode: @unchecked Sendable {
    // @unchecked: immutable once published (see above).
    @usableFromInline let key: ObjectIdentifier
    @usableFromInline let view: AnyProtocolView
    /// Unchecked: written once before publication, only read after it.
    @exclusivity(unchecked)
    @usableFromInline var next: Unmanaged<ProtocolViewNode>?

    init(key: ObjectIdentifier, view: AnyProtocolView) {
        self.key = key
        self.view = view
        self.next = nil
    }
}
