import Foundation

/// A variable that a test and its handlers, on any thread, may read and
/// write: every access takes `lock`, and ``update(_:)`` holds it across a
/// read-modify-write (`value += 1` would not be atomic; use `update`).
public final class SharedVariable<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `storage` is only touched while `lock` is held.
    private let lock = NSLock()
    private var storage: Value

    public init(_ value: Value) { storage = value }

    public var value: Value {
        get {
            lock.lock()
            defer { lock.unlock() }
            return storage
        }
        set {
            lock.lock()
            storage = newValue
            lock.unlock()
        }
    }

    /// Runs `body` on the value with the lock held.
    @discardableResult
    public func update<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&storage)
    }
}
