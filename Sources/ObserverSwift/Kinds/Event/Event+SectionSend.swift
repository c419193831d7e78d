import CObserverCore

extension Event {
    /// ``send(_:)`` for a caller already inside a read section entered on
    /// `reader` (the calling thread's): counts the trigger and delivers, but
    /// neither enters nor leaves a section.
    @inlinable
    @inline(__always)
    func send(_ value: Value, inSectionOf reader: OpaquePointer?) {
        triggers.increment(by: reader)
        if oc_list_is_empty(slots.pointer) { return }
        forEachVisibleBox(in: slots.pointer, as: EventSubscriber<Value>.self) { $0.receive(value) }
    }
}
