import Foundation
import ObserverEngine

/// A `NotificationCenter` block observer that can be started and stopped,
/// and that is fully deregistered when released (HSObserver's `HSObserver`,
/// same initializer labels and defaults).
///
/// ```swift
/// final class Watcher {
///     static let wave = Notification.Name("wave")
///     let waveObserver: NotificationObserver
///
///     init() {
///         waveObserver = NotificationObserver(forName: Watcher.wave, activate: true) { _ in
///             print("wave")
///         }
///     }
/// }
/// ```
///
/// Defaults: `object: nil` (any poster), `queue: .main` (the handler runs on
/// the main queue; pass `queue: nil` to run it on the posting thread, inside
/// `post`), `center: .default`, and inactive: call ``activate()`` (or pass
/// `activate: true`, or chain `.activate()`).
///
/// The observer registers one block per name with Foundation's own center —
/// `NotificationCenter` is the dispatcher here, not the C core; groups of
/// observers (``HasObservers``) are kept in the core.
///
/// Guarantees: ``activate()`` and ``deactivate()`` may be called from any
/// thread (also from inside the handler) and are idempotent. After
/// ``deactivate()`` returns, or after the observer is released, the handler
/// is not called by any delivery that starts later — including deliveries
/// that a queue had already accepted. Releasing it removes every block it
/// registered with the center. The handler is a plain closure: it runs on
/// `queue` (or the posting thread for `queue: nil`) and must be safe there.
/// Beware of retain cycles: the observer holds its handler strongly.
///
/// On Linux, Foundation's `post` waits until a block it hands to another
/// queue has run: posting from a background thread with the default
/// `queue: .main` blocks the poster until the main run loop runs it (do not
/// make the main thread wait for such a poster). Posting on the main thread
/// runs a `.main` block at once, inside `post`.
public final class NotificationObserver: Observes, CustomStringConvertible, @unchecked Sendable {
    // @unchecked: `names`, `object`, `queue`, `center` and `handler` never
    // change after init; mutable state is behind `registrations`, and the
    // activation check is atomic. `object` is only handed to the center.

    /// The observed notification names.
    public let names: [Notification.Name]
    /// The posting object to match; nil matches any poster.
    public let object: Any?
    /// Where the handler runs; nil means on the posting thread.
    public let queue: OperationQueue?
    /// The center the observer registers with.
    public let center: NotificationCenter

    private let handler: @Sendable (Notification) -> Void
    let ownerGate = OwnerGate()

    /// The center's tokens for the current activation (empty when inactive).
    private let registrations = Locked<[Registration]>([])
    /// Non-zero while active: the number of the current activation. A block
    /// registered by an earlier activation sees a different number and drops
    /// its delivery (it may still sit in a queue after `deactivate()`).
    private let activation = HeapAtomicWord<Int>(0)
    private let activationCounter = HeapAtomicWord<Int>(0)

    /// Creates an observer of one notification name.
    ///
    /// - Parameters:
    ///   - name: the notification name.
    ///   - object: only notifications posted by this object (default nil: any).
    ///   - queue: where `block` runs (default `.main`; nil: the posting thread).
    ///   - center: the notification center (default `.default`).
    ///   - activate: whether to start observing at once (default false).
    ///   - block: the handler (beware of retain cycles).
    public convenience init(
        forName name: Notification.Name,
        object: Any? = nil,
        queue: OperationQueue? = .main,
        center: NotificationCenter = .default,
        activate: Bool = false,
        using block: @escaping @Sendable (Notification) -> Void
    ) {
        self.init(forNames: [name], object: object, queue: queue, center: center, activate: activate, using: block)
    }

    /// Creates an observer of several notification names with one handler.
    ///
    /// <!-- snippet: fragment of WaveNotifications -->
    /// ```swift
    /// let observer = NotificationObserver(forNames: [.wave, .hello], queue: nil) { note in
    ///     print(note.name)
    /// }.activate()
    /// ```
    ///
    /// Duplicate names are observed once. Parameters as in
    /// ``init(forName:object:queue:center:activate:using:)``.
    public init(
        forNames names: [Notification.Name],
        object: Any? = nil,
        queue: OperationQueue? = .main,
        center: NotificationCenter = .default,
        activate: Bool = false,
        using block: @escaping @Sendable (Notification) -> Void
    ) {
        var unique: [Notification.Name] = []
        for name in names where !unique.contains(name) { unique.append(name) }
        self.names = unique
        self.object = object
        self.queue = queue
        self.center = center
        self.handler = block
        if activate { self.activate() }
    }

    deinit {
        // No block can be running with `self` (each holds it only weakly and
        // a running delivery holds it strongly), so removing is all that is left.
        for registration in registrations.withLock({ $0 }) {
            center.removeObserver(registration.token)
        }
    }

    /// Whether the observer is registered with its center.
    public var isActive: Bool { activation.load(ordering: .acquiring) != 0 }

    /// Registers with the center; a no-op when already active. Any thread.
    @discardableResult
    public func activate() -> Self {
        registrations.withLock { registrations in
            guard registrations.isEmpty, !ownerGate.ownerIsGone else { return }
            let number = activationCounter.wrappingAdd(1, ordering: .relaxed).newValue
            // Publish the number before the center can deliver under it.
            activation.store(number, ordering: .releasing)
            for name in names {
                let receipt = NotificationReceipt()
                let token = center.addObserver(forName: name, object: object, queue: queue) {
                    [weak self, receipt] notification in
                    withExtendedLifetime(receipt) {}
                    self?.deliver(notification, activation: number)
                }
                registrations.append(Registration(token: token, receipt: receipt))
            }
        }
        return self
    }

    /// Deregisters from the center; a no-op when inactive. Any thread.
    /// A handler already running keeps running; none starts afterwards.
    @discardableResult
    public func deactivate() -> Self {
        let removed = registrations.withLock { registrations -> [Registration] in
            activation.store(0, ordering: .releasing)
            defer { registrations.removeAll() }
            return registrations
        }
        for registration in removed {
            center.removeObserver(registration.token)
        }
        return self
    }

    /// One receipt per block registered by the current activation. The
    /// center holds a receipt exactly as long as it holds the block: tests
    /// watch them to prove the center let go (its tokens do not tell).
    var centerReceipts: [AnyObject] {
        registrations.withLock { $0.map(\.receipt) }
    }

    /// The observed names and object, and whether the observer is active.
    public var description: String {
        "NotificationObserver: \(names.map(\.rawValue)) - object: \(object.map { String(describing: $0) } ?? "nil")"
            + (isActive ? " (active)" : " (inactive)")
    }

    private func deliver(_ notification: Notification, activation number: Int) {
        guard activation.load(ordering: .acquiring) == number else { return }
        if ownerGate.ownerIsGone {
            deactivate()
            return
        }
        handler(notification)
    }
}

extension NotificationObserver: OwnerGated {}

/// A token returned by `NotificationCenter.addObserver(forName:...)`.
private struct Registration: @unchecked Sendable {
    // @unchecked: the token is an opaque handle only ever passed back to the
    // center's (thread-safe) `removeObserver(_:)`.
    let token: NSObjectProtocol
    let receipt: NotificationReceipt
}

/// Captured by each registered block (see `centerReceipts`).
final class NotificationReceipt: Sendable {}
