import Dispatch
import ObserverSwift

/// One observer kind as the reliability tests drive it: a source of `Int`
/// values with closure and (optionally) weak-target subscriptions.
///
/// The reentrancy matrix, the model-based test, the bad-input tests and the
/// torture test run against every kind in `ReliabilityObserverKinds.all`
/// (the first three also against `registries`). To
/// cover a new observer kind, add a `<Kind>KindAdapter.swift` next to
/// `EventKindAdapter.swift` that maps these operations onto the kind's public
/// API, and append it to `all`. Where the kind differs from `Event`, the
/// adapter models the difference instead of a row leaving it out: a kind
/// whose subscribe delivers something at once (a current value) checks and
/// hides that initial delivery, so that "a subscription added during a send
/// is not called by it" means the same thing for every kind
/// (`ObservableValueKindAdapter.swift`); a kind whose removals count
/// something else than subscriptions converts the count
/// (`KeyedEventKindAdapter.swift`).
protocol ReliabilityObserverKind: Sendable {
    /// Used in failure messages.
    var name: String { get }
    func makeSource() -> any ReliabilitySource
}

/// A live source of one observer kind.
protocol ReliabilitySource: AnyObject, Sendable {
    /// Subscribes a closure called synchronously on the sending thread (on
    /// every thread that sends, hence `@Sendable`).
    @discardableResult func subscribe(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription
    /// Whether `subscribe(target:_:)` is supported by this kind.
    var supportsTargets: Bool { get }
    /// Subscribes on behalf of a weakly held target (only if `supportsTargets`).
    @discardableResult func subscribe(
        target: ReliabilityTarget, _ handler: @escaping @Sendable (ReliabilityTarget, Int) -> Void
    ) -> Subscription
    /// Removes every subscription of `target`; returns how many.
    @discardableResult func unsubscribe(target: ReliabilityTarget) -> Int
    /// Removes every subscription; returns how many were stored.
    @discardableResult func unsubscribeAll() -> Int
    /// Delivers `value` to every subscription, synchronously.
    func send(_ value: Int)
    /// Subscriptions that can still deliver.
    var subscribersCount: Int { get }

    // Optional operations (nil when the kind has no such form); the
    // model-based test uses them where they exist.

    /// Subscribes a closure delivered asynchronously on `queue`.
    func subscribe(queue: DispatchQueue, _ handler: @escaping @Sendable (Int) -> Void) -> Subscription?
    /// Subscribes a closure under a key no send ever reaches because it is
    /// not equal to itself (`Double.nan`): stored, counted, never called.
    func subscribeUnreachableKey(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription?
    /// Subscribes with a replay whose handler calls `cancelAndWait()` on its
    /// own token; returns whether that call threw `waitInsideDelivery`
    /// (the subscription is cancelled either way).
    func replayThenWaitInsideThrows() -> Bool?
}

extension ReliabilitySource {
    func subscribe(queue: DispatchQueue, _ handler: @escaping @Sendable (Int) -> Void) -> Subscription? { nil }
    func subscribeUnreachableKey(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription? { nil }
    func replayThenWaitInsideThrows() -> Bool? { nil }
}

enum ReliabilityObserverKinds {
    /// Every observer kind the reliability tests cover.
    static let all: [any ReliabilityObserverKind] = [
        EventKindAdapter(),
        KeyedEventKindAdapter(),
        ObservableValueKindAdapter(),
    ]

    /// The registries: they notify (`withObservers`) rather than send, and
    /// the adapters map `send` onto that. The reentrancy matrix, the
    /// model-based test and the bad-input tests run them with `all`; the
    /// torture test runs `all` only (its duration is per kind).
    static let registries: [any ReliabilityObserverKind] = [
        ObserverRegistryKindAdapter(),
        KeyedObserverRegistryKindAdapter(),
    ]

    /// `all` and the registries.
    static let allWithRegistries: [any ReliabilityObserverKind] = all + registries
}
