import CObserverCore

/// The name of one stored subscriber in its slot list, issued by the core
/// when the subscriber is added: a 64-bit sequence (never reissued, never 0)
/// and the slot's index. Removing by a stale handle is a no-op.
@usableFromInline
typealias SlotHandle = oc_handle_t

extension SlotHandle {
    /// The value a subscriber's handle holds before it was added.
    static var notAdded: SlotHandle { oc_handle_none() }

    /// Whether this is ``notAdded``.
    var isNotAdded: Bool { oc_handle_is_none(self) }
}
