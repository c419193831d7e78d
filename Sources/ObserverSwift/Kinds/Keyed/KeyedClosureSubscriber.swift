/// `subscribe(keys:)` with a synchronous, unlimited handler of key and value:
/// the keyed hot path, holding nothing but the closure. (`subscribe(key:)`'s
/// handler of the value alone is a `ClosureSubscriber`.)
final class KeyedClosureSubscriber<Key: Hashable, Value>: EventSubscriber<Key, Value>, @unchecked Sendable {
    let handler: (Key, Value) -> Void

    init(_ handler: @escaping (Key, Value) -> Void) {
        self.handler = handler
    }

    override func receive(_ key: Key, _ value: Value) {
        handler(key, value)
    }
}
