import CObserverCore

/// The send loop every observer kind shares: calls `body` with each box of
/// `list` that a send starting now may call, borrowed at +0 (no retain or
/// release per delivery).
///
/// The caller must be inside a read section (`oc_read_begin`) for the whole
/// call: the core keeps the slot array and the boxes alive until it ends.
/// Inlined and specialized for `Box`, so it costs what the hand-written loop
/// did.
@inlinable
@inline(__always)
func forEachVisibleBox<Box: AnyObject>(
    in list: OpaquePointer, as _: Box.Type, _ body: (Box) -> Void
) {
    let view = oc_list_view(list)
    var index: UInt32 = 0
    while index < view.count {
        if let context = oc_view_context(view, index) {
            Unmanaged<Box>.fromOpaque(context)._withUnsafeGuaranteedRef { body($0) }
        }
        index &+= 1
    }
}
