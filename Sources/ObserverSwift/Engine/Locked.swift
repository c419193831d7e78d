import Foundation

/// A value guarded by a lock, with `Synchronization.Mutex`'s `withLock`
/// shape.
///
/// Why not `Mutex`: on Linux, ThreadSanitizer does not see the happens-before
/// edges of `Mutex` (its futex-based lock), so every guarded access made
/// from two threads is reported as a "Swift access race" — in this library
/// and in its users' TSan runs. `NSLock` is a pthread mutex, which TSan
/// understands. Writers are never on the send path, so the difference in
/// cost does not matter here.
@usableFromInline
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value: Value

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }

    @usableFromInline
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
