import Foundation

/// A counter that threads increment behind a lock. The lock orders the
/// threads that count as ThreadSanitizer sees it: where a test must add no
/// synchronization between the threads it watches, count with relaxed
/// atomics instead.
public final class LockedCounter: @unchecked Sendable {
    // @unchecked: `storage` is only touched while `lock` is held.
    private let lock = NSLock()
    private var storage = 0

    public init() {}

    public func increment() {
        lock.lock()
        storage += 1
        lock.unlock()
    }

    public var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
