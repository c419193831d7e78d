import Foundation

/// A thread-safe list of received values, appended to by handlers on any
/// thread and read by the test. Every access takes a lock, so a reader sees
/// every append that returned before it.
public final class Received<Element: Sendable>: @unchecked Sendable {
    // @unchecked: `storage` is only touched while `lock` is held.
    private let lock = NSLock()
    private var storage: [Element] = []

    public init() {}

    public func append(_ element: Element) {
        lock.lock()
        storage.append(element)
        lock.unlock()
    }

    public var values: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    public var count: Int { values.count }
}
