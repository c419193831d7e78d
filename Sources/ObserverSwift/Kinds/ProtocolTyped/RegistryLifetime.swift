import Foundation

/// What a registry's tokens hold instead of the registry: a token must not
/// keep its registry alive (a registry's owner may be long gone while an
/// observer still keeps a token), and a `weak` reference would give the
/// registry a side table, which every later retain and release of it would
/// go through.
///
/// The registry makes one on its first token and ends it in its `deinit`,
/// under `lock`; a token's call runs under the same lock, holding the
/// registry strongly, so the registry's deinit (which ends this first)
/// cannot finish during the call, and no call starts after it began.
final class RegistryLifetime<Registry: AnyObject>: @unchecked Sendable {
    // @unchecked: `isAlive` is guarded by `lock`; `registry` is only loaded
    // under it while `isAlive`.

    /// Recursive: a token's call may release the last reference to the
    /// registry's owner, whose registry's deinit then ends this on the same
    /// thread (after the call: the call holds the registry).
    private let lock = NSRecursiveLock()
    private unowned(unsafe) let registry: Registry
    private var isAlive = true

    init(_ registry: Registry) {
        self.registry = registry
    }

    /// Called by the registry's deinit: no token call starts afterwards.
    func end() {
        lock.lock()
        isAlive = false
        lock.unlock()
    }

    /// Calls `body` with the registry, or returns nil once it is gone.
    func withRegistry<Result>(_ body: (Registry) -> Result) -> Result? {
        lock.lock()
        defer { lock.unlock() }
        guard isAlive else { return nil }
        // Strong for the call: the registry's deinit, if it has started on
        // another thread, waits in `end()` until this returns.
        let strong = registry
        return withExtendedLifetime(strong) { body(strong) }
    }
}
