/// A plain closure subscription stored without an object: the closure lives
/// in typed memory of its own (a cell), and its slot's context is the cell's
/// address with its lowest bit set, which no object's address has. An
/// `Event`'s list stores these beside ``Subscriber`` boxes; the slot list's
/// walks, sends and release callback tell them apart by that bit.
///
/// A cell is a ``HandlerCellContents``, 24 bytes in a ``HeapBlock`` (32 on the heap,
/// where an object holding the same closure takes 48): first the class that
/// destroys it (a ``HandlerCellKind`` metatype, so that the core's release
/// callback, which knows no `Value`, can deinitialize the closure as its own
/// type), then the closure. The closure is initialized and deinitialized as
/// what it is; nothing reads its representation.
///
/// The core releases the context (``destroy(_:)``) only after a grace
/// period, so a cell is never freed while a sender may still be calling it;
/// sends call the closure in place, without copying it (no retain or release
/// per delivery).
@usableFromInline
package enum HandlerCell {
    /// A new cell holding `handler`, as a slot context (tagged).
    @inlinable
    package static func make<Value>(_ handler: @escaping (Value) -> Void) -> UnsafeMutableRawPointer {
        let cell = HeapBlock.allocate(byteCount: MemoryLayout<HandlerCellContents<Value>>.size)
            .bindMemory(to: HandlerCellContents<Value>.self, capacity: 1)
        cell.initialize(to: HandlerCellContents(kind: TypedHandlerCellKind<Value>.self, handler: handler))
        return UnsafeMutableRawPointer(cell) + 1
    }

    /// Whether a slot context is a cell (not a ``Subscriber`` box).
    @inlinable @inline(__always)
    package static func isCell(_ context: UnsafeMutableRawPointer) -> Bool {
        UInt(bitPattern: context) & 1 != 0
    }

    /// The contents of the cell `context` (a tagged cell made by
    /// ``make(_:)`` for this `Value`).
    @inlinable @inline(__always)
    package static func contents<Value>(
        _ context: UnsafeMutableRawPointer, as _: Value.Type
    ) -> UnsafeMutablePointer<HandlerCellContents<Value>> {
        (context - 1).assumingMemoryBound(to: HandlerCellContents<Value>.self)
    }

    /// What a cell is, for a predicate over ``Subscriber``s
    /// (`AnySlotList.removeAll(where:)`): a subscription with no target that
    /// never expires. One object, shared by every cell.
    package static let asSubscriber = Subscriber()

    /// Deinitializes the closure and frees the cell `context`: the core's
    /// release callback, once no reader can see it.
    @usableFromInline
    package static func destroy(_ context: UnsafeMutableRawPointer) {
        let cell = context - 1
        // The kind is the contents' first field, at offset 0 whatever `Value` is.
        cell.load(as: HandlerCellKind.Type.self).destroy(cell)
    }
}

/// What a ``HandlerCell`` holds. The closure is a stored property of a
/// generic struct, as it would be of a generic class, so a closure passed
/// in as `(Value) -> Void` is stored as it is (an `UnsafeMutablePointer`
/// to the closure type alone would store it at the most general
/// abstraction, through a reabstraction thunk: an allocation of its own).
///
/// Noncopyable, so that ``call(_:)`` through a pointer borrows the contents
/// in place: a copyable value read through a pointer is copied for the
/// call (a retain and a release of the closure's context per delivery).
@usableFromInline
package struct HandlerCellContents<Value>: ~Copyable {
    /// First: read by ``HandlerCell/destroy(_:)`` without knowing `Value`.
    @usableFromInline package let kind: HandlerCellKind.Type
    @usableFromInline package let handler: (Value) -> Void

    @inlinable
    package init(kind: HandlerCellKind.Type, handler: @escaping (Value) -> Void) {
        self.kind = kind
        self.handler = handler
    }

    /// Calls the closure with `value`, borrowing it.
    @inlinable @inline(__always)
    package func call(_ value: Value) { handler(value) }
}

/// What destroys a ``HandlerCell``: a class used only through its metatype
/// (never instantiated), whose generic subclass knows the closure's type.
@usableFromInline
package class HandlerCellKind {
    package class func destroy(_ cell: UnsafeMutableRawPointer) {}
}

/// Generic over the closure's parameter, for ``HandlerCell/make(_:)``'s
/// kind field. The release needs no type: every closure, whatever its
/// parameters, is a function and a context reference, which a release
/// gives back, so the cell's closure is deinitialized as `() -> Void`
/// (no metadata lookup, no value witness call: one `swift_release`).
@usableFromInline
package final class TypedHandlerCellKind<Value>: HandlerCellKind {
    package override class func destroy(_ cell: UnsafeMutableRawPointer) {
        // The closure, the contents' one field that needs deinitializing, at
        // its offset (after the metatype, whatever `Value` is).
        (cell + MemoryLayout<HandlerCellKind.Type>.stride).bindMemory(to: (() -> Void).self, capacity: 1)
            .deinitialize(count: 1)
        HeapBlock.free(cell)
    }
}
