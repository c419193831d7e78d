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
    forEachVisibleBox(inView: oc_list_view(list), as: Box.self, body)
}

/// ``forEachVisibleBox(in:as:_:)`` over a view already taken (same section).
@inlinable
@inline(__always)
func forEachVisibleBox<Box: AnyObject>(inView view: oc_view_t, as _: Box.Type, _ body: (Box) -> Void) {
    var index: UInt32 = 0
    while index < view.count {
        if let context = oc_view_context(view, index) {
            Unmanaged<Box>.fromOpaque(context)._withUnsafeGuaranteedRef { body($0) }
        }
        index &+= 1
    }
}

/// ``forEachVisibleBox(in:as:_:)`` for a list that may hold ``HandlerCell``s
/// of `(Value) -> Void` (an `Event`'s): calls each cell's closure with
/// `value` in place (borrowed, no retain), and `body` with each box.
@inlinable
@inline(__always)
func forEachVisibleCellOrBox<Value, Box: AnyObject>(
    in list: OpaquePointer, _ value: Value, as _: Box.Type, _ body: (Box) -> Void
) {
    forEachVisibleCellOrBox(inView: oc_list_view(list), value, as: Box.self, body)
}

/// ``forEachVisibleCellOrBox(in:_:as:_:)`` over a view already taken (same section).
@inlinable
@inline(__always)
func forEachVisibleCellOrBox<Value, Box: AnyObject>(
    inView view: oc_view_t, _ value: Value, as _: Box.Type, _ body: (Box) -> Void
) {
    var index: UInt32 = 0
    while index < view.count {
        if let context = oc_view_context(view, index) {
            if HandlerCell.isCell(context) {
                HandlerCell.contents(context, as: Value.self).pointee.call(value)
            } else {
                Unmanaged<Box>.fromOpaque(context)._withUnsafeGuaranteedRef { body($0) }
            }
        }
        index &+= 1
    }
}
