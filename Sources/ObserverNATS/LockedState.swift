import Foundation

/// State guarded by an `NSLock` (ThreadSanitizer sees its happens-before
/// edges; it does not see the standard library `Mutex`'s on Linux, and
/// `Mutex` needs macOS 15 / iOS 18). Used only off
/// the send path: registering and closing imports and exports.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class LockedState<State>: @unchecked Sendable {
    // @unchecked: `state` is only read or written inside `withLock`, under `lock`.
    private let lock = NSLock()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
