/// The registered observers that conform to one protocol, as a list on the
/// C core. Type-erased root, so the registry can keep views of any `P`.
@usableFromInline
class AnyProtocolView: @unchecked Sendable {
    // @unchecked: `slots` is internally synchronized; the rest is immutable.

    /// The view's list, untyped: what the registry removes handles from.
    let slots: AnySlotList
    let deadFlag: DeadObserverFlag

    init(slots: AnySlotList, deadFlag: DeadObserverFlag) {
        self.slots = slots
        self.deadFlag = deadFlag
    }

    /// Casts `observer` once and, when it conforms, stores it in this view.
    /// Returns its handle, or nil when it does not conform (or is dead).
    func addIfConforming(_ observer: RegisteredObserver) -> SlotHandle? { nil }
}

/// The view of observers conforming to `P`: what `withObservers` for `P`
/// iterates.
@usableFromInline
final class ProtocolView<P>: AnyProtocolView, @unchecked Sendable {
    /// The same list as `slots`, typed: every box is a `ConformingObserver<P>`.
    @usableFromInline
    let conforming: SlotList<ConformingObserver<P>>

    init(deadFlag: DeadObserverFlag) {
        let conforming = SlotList<ConformingObserver<P>>()
        self.conforming = conforming
        super.init(slots: conforming, deadFlag: deadFlag)
    }

    override func addIfConforming(_ observer: RegisteredObserver) -> SlotHandle? {
        guard let box = ConformingObserver<P>.make(for: observer, in: conforming, deadFlag: deadFlag) else {
            return nil
        }
        return conforming.add(box)
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
    @inlinable @inline(__always)
    func sendHere(_ body: (P) -> Void) -> Int {
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
/// protocol type's identity. Nodes are immutable and live as long as their
/// registry (which keeps them), so readers walk them without retaining.
@usableFromInline
final class ProtocolViewNode: @unchecked Sendable {
    // @unchecked: immutable after init.
    @usableFromInline let key: ObjectIdentifier
    @usableFromInline let view: AnyProtocolView
    @usableFromInline let next: Unmanaged<ProtocolViewNode>?

    init(key: ObjectIdentifier, view: AnyProtocolView, next: Unmanaged<ProtocolViewNode>?) {
        self.key = key
        self.view = view
        self.next = next
    }
}
