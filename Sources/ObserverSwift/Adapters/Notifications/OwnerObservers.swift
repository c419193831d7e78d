import ObserverEngine

/// The observers one ``HasObservers`` owner added, kept in the C core: one
/// `SlotList` whose boxes hold the observers. Switching the group on or off
/// walks the slot snapshot like a send does (no Swift array of observers).
final class OwnerObservers: @unchecked Sendable {
    // @unchecked: the slot list is internally synchronized; `owner` is a
    // weak reference written only in init.

    private let slots = SlotList<GroupMember>()
    weak var owner: AnyObject?

    init(owner: AnyObject) {
        self.owner = owner
    }

    deinit {
        // The list releases its boxes only after a grace period; deregister
        // now so that nothing is observed on behalf of a group that is gone.
        deactivateAll()
    }

    func add(_ observer: any Observes) {
        _ = slots.add(GroupMember(observer))
    }

    /// Calls `body` on every member visible now, inside one read section.
    /// `body` may add to or activate anything, including this group.
    func forEachObserver(_ body: (any Observes) -> Void) {
        slots.forEach { body($0.observer) }
    }

    func activateAll() { forEachObserver { $0.activate() } }
    func deactivateAll() { forEachObserver { $0.deactivate() } }

    var count: Int { slots.storedCount }
}

/// A slot box holding one member of a group strongly.
private final class GroupMember: Subscriber, @unchecked Sendable {
    // @unchecked: `observer` is immutable; conformers of `Observes` are
    // required to be callable from any thread.
    let observer: any Observes
    init(_ observer: any Observes) { self.observer = observer }
}
