/// A value received for a key, as an all-keys import delivers it (see
/// `NATSBridge.import(prefix:matching:into:delivery:)` into an `Event` of them).
public struct NATSKeyedValue<Key, Value> {
    /// The key the value was published for.
    public let key: Key
    /// The value.
    public let value: Value

    /// A value for `key`.
    public init(key: Key, value: Value) {
        self.key = key
        self.value = value
    }
}

extension NATSKeyedValue: Sendable where Key: Sendable, Value: Sendable {}
extension NATSKeyedValue: Equatable where Key: Equatable, Value: Equatable {}
extension NATSKeyedValue: Hashable where Key: Hashable, Value: Hashable {}
