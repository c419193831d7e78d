/// A synchronous, unlimited handler of key and value subscribed to a
/// ``KeySelection`` (`forKeys(_:)`): the keyed hot path for
/// several keys, holding nothing but the closure. (One key's plain handler
/// of the value alone goes into a cell: `KeyedSlotLists.subscribe(_:forKey:)`.)
final class KeyedClosureSubscriber<Key: Hashable, Value>: EventSubscriber<Key, Value>, @unchecked Sendable {
    let handler: (Key, Value) -> Void

    init(_ handler: @escaping (Key, Value) -> Void) {
        self.handler = handler
    }

    override func receive(_ key: Key, _ value: Value) {
        handler(key, value)
    }
}
