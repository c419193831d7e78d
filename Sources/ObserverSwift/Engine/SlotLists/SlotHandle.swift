import CObserverCore

/// The name of one stored subscriber in its slot list, issued by the core
/// when the subscriber is added: a 64-bit sequence (never reissued, never 0)
/// and the index of the slot it was added at. A shrink may compact the list
/// and move the subscriber to a lower slot; the core then finds it by its
/// sequence, so the handle stays valid while the subscriber is stored.
/// Removing by a stale handle is a no-op.
@usableFromInline
typealias SlotHandle = oc_handle_t

extension SlotHandle {
    /// The value a subscriber's handle holds before it was added.
    static var notAdded: SlotHandle { oc_handle_none() }

    /// Whether this is ``notAdded``.
    var isNotAdded: Bool { oc_handle_is_none(self) }
}
