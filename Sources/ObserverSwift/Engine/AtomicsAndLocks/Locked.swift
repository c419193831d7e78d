import Foundation

/// A value guarded by a lock, with the standard library's `Mutex`'s
/// `withLock` shape.
///
/// Why not `Mutex`: it needs macOS 15 / iOS 18, above the package's floor;
/// and on Linux, ThreadSanitizer does not see its happens-before edges (its
/// futex-based lock), so every guarded access made from two threads is
/// reported as a "Swift access race" — in this library and in its users'
/// TSan runs. `NSLock` is a pthread mutex, which TSan understands, on every
/// platform the package supports. Writers are never on the send path, so the
/// difference in cost does not matter here.
@usableFromInline
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value: Value

    @usableFromInline
    package init(_ value: Value) {
        self.value = value
    }

    @usableFromInline
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
