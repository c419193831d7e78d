import Dispatch
import ObserverEngine
import ObserverSwift

/// Runs `body`, settles (``settleDeliveries(timeout:)``), and fails if a
/// subscription `body` made is still active: each is listed with its kind,
/// source type, delivery and the file and line of the `subscribe`,
/// `addObserver`, `export` or `import` call that made it.
///
/// ```swift
/// try await expectNoLeakedSubscriptions {
///     let saved = Event<Int>()
///     let token = saved.subscribe { print($0) }
///     saved.send(1)
///     token.cancel()
/// }
/// ```
///
/// The subscriptions checked are those made by `body`'s task and the tasks
/// it starts (`Task { }` inherits the check, `Task.detached` does not), so
/// tests running in parallel do not see each other's. A subscription whose
/// source, target or observer is deallocated has ended: it is not a leak.
///
/// - Parameter timeout: how long the settle may take.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws; otherwise ``ObserverTestFailure`` listing
///   the leaked subscriptions (or what a settle could not finish).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@discardableResult
public func expectNoLeakedSubscriptions<Result>(
    timeout: Duration = .seconds(5), _ body: () async throws -> Result
) async throws -> Result {
    ObserverCore.isTrackingSubscriptions = true
    let scope = LeakCheckScopes.next()
    let result = try await SubscriptionTracking.$scope.withValue(scope) { try await body() }
    try await settleDeliveries(timeout: timeout)
    try throwIfLeaked(SubscriptionTracking.activeRecords.filter { $0.scope == scope })
    return result
}

/// A leak check that spans a test case, for XCTest's `setUp` and
/// `tearDown` (or any code that cannot wrap what it checks in a closure):
/// the subscriptions made after ``init()`` that are still active at
/// ``verify(timeout:)`` are leaks. Make one in `setUp` and call
/// `try await check.verify()` in an `async throws` `tearDown`:
///
/// ```swift
/// let check = SubscriptionLeakCheck()
/// let saved = Event<Int>()
/// let token = saved.subscribe { print($0) }
/// saved.send(1)
/// token.cancel()
/// try await check.verify()   // throws, listing each leak, if one was left active
/// ```
///
/// It counts every subscription made in the process after `init()`, on any
/// thread: XCTest runs a class's tests one at a time, but tests that run in
/// parallel (Swift Testing's default) use ``expectNoLeakedSubscriptions(timeout:_:)``,
/// which tells their subscriptions apart.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public struct SubscriptionLeakCheck: Sendable {
    private let firstIdentifier: UInt64

    /// Starts the check: subscriptions made from now on are checked.
    public init() {
        ObserverCore.isTrackingSubscriptions = true
        firstIdentifier = SubscriptionTracking.nextIdentifier
    }

    /// Settles, then fails if a subscription made since ``init()`` is still
    /// active.
    /// - Throws: ``ObserverTestFailure`` listing each leak with its kind,
    ///   source type, delivery and creation site.
    public func verify(timeout: Duration = .seconds(5)) async throws {
        try await settleDeliveries(timeout: timeout)
        try verifyWithoutSettling()
    }

    /// The check without settling: for a synchronous test, after the
    /// deliveries it queued ran. Cancelled subscriptions are never leaks,
    /// whether or not their handlers were released yet.
    public func verifyWithoutSettling() throws {
        try throwIfLeaked(SubscriptionTracking.activeRecords.filter { $0.identifier >= firstIdentifier })
    }

    /// The subscriptions made since ``init()`` that are still active.
    public var activeSubscriptions: [LiveSubscription] {
        SubscriptionTracking.activeRecords.filter { $0.identifier >= firstIdentifier }.map(\.snapshot)
    }
}

/// Throws the failure listing `leaked`, if any.
private func throwIfLeaked(_ leaked: [TrackedSubscription]) throws {
    guard !leaked.isEmpty else { return }
    let lines = leaked.map { "  - \($0.snapshot)" }
    let count = leaked.count == 1 ? "1 subscription" : "\(leaked.count) subscriptions"
    throw ObserverTestFailure("\(count) leaked (still active):\n" + lines.joined(separator: "\n"))
}

/// Scope numbers for leak checks.
private enum LeakCheckScopes {
    private static let last = Locked<UInt64>(0)
    static func next() -> UInt64 {
        last.withLock {
            $0 += 1
            return $0
        }
    }
}
