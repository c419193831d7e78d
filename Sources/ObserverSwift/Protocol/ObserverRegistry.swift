import CObserverCore
import Dispatch
import Foundation
import Synchronization

/// Observers of any protocols, held weakly, called by the protocol they
/// conform to: the composition form of ``ObservableClass`` (Flowduino's
/// `ObservableClass`), for types that cannot inherit.
///
/// ```swift
/// protocol TemperatureObserver: AnyObject {
///     func temperatureChanged(to celsius: Double)
/// }
/// final class Display: TemperatureObserver {
///     func temperatureChanged(to celsius: Double) { print("now \(celsius) °C") }
/// }
/// let registry = ObserverRegistry()
/// let display = Display()
/// registry.addObserver(display)
/// registry.withObservers { (observer: TemperatureObserver) in
///     observer.temperatureChanged(to: 21.5)
/// }
/// ```
///
/// **Which observers are called.** `withObservers` calls exactly the
/// registered observers that conform to the type of its closure's
/// parameter (a protocol, a protocol composition, a class, `AnyObject`).
/// Whether an observer conforms is decided once per observer and protocol
/// (when the protocol is first used, or when the observer is added
/// afterwards), never by a cast per call: each protocol used gets its own
/// list of conforming observers on the C core.
///
/// **Weak references.** Observers are not retained. One that is deallocated
/// is never called again and is dropped from every list; there is no need to
/// remove observers in `deinit`. Adding the same observer twice is a no-op
/// (returns false).
///
/// **Threads.** Every method may be called from any thread. `withObservers`
/// takes no lock and never waits; `addObserver` and `removeObserver` never
/// wait for a `withObservers` in progress (Flowduino's "revolving door"). An
/// observer added during a `withObservers` is not called by it; one removed
/// during it may still be called by it, and is not called by any
/// `withObservers` that starts afterwards. An observer is called on the
/// thread that calls `withObservers` unless it was added with another
/// ``Delivery`` (a queue, or the main actor).
///
/// **Reentrancy.** An observer called by `withObservers` may add or remove
/// observers (itself included) and may call `withObservers` again.
public final class ObserverRegistry: @unchecked Sendable {
    // @unchecked: the writer state below is guarded by `lock`; the lists are
    // the internally synchronized C core; `viewHead` is atomic and the nodes
    // it reaches are immutable.

    /// Every registered observer (its `RegisteredObserver` box).
    let all = SlotList()
    /// Head of the lock-free list of protocol views, newest first.
    @usableFromInline
    let viewHead = Atomic<Unmanaged<ProtocolViewNode>?>(nil)
    let deadFlag: DeadObserverFlag

    /// Recursive: releasing an observer (or a box) may run a `deinit` that
    /// calls back into this registry on the same thread.
    private let lock = NSRecursiveLock()
    private var records: [ObjectIdentifier: RegisteredObserver] = [:]
    private var viewsByKey: [ObjectIdentifier: ProtocolViewBase] = [:]
    /// Every view, in creation order (what `addObserver` casts into).
    private var views: [(key: ObjectIdentifier, view: ProtocolViewBase)] = []
    /// Owns the nodes `viewHead` reaches (readers borrow them at +0).
    private var nodes: [ProtocolViewNode] = []

    /// Creates an empty registry.
    public init() {
        deadFlag = DeadObserverFlag()
    }

    /// A registry whose sends also report dead observers to `parent` (a
    /// ``KeyedObserverRegistry`` holding one registry per key).
    init(reportingDeathsTo parent: DeadObserverFlag) {
        deadFlag = DeadObserverFlag(parent: parent)
    }

    // MARK: Adding and removing

    /// Registers `observer`, held weakly. Returns false (and changes nothing)
    /// when it is registered already.
    ///
    /// - Parameters:
    ///   - observer: the object to register; the registry does not retain it.
    ///   - delivery: where this observer's calls run: on the thread
    ///     calling `withObservers` (the default), on a queue, or on the main
    ///     actor. Queued calls check again, where they run, that the observer
    ///     is still alive.
    @discardableResult
    public func addObserver(_ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        sweepDeadObserversLocked(force: false)
        let identifier = ObjectIdentifier(observer)
        if records[identifier] != nil { return false }
        let record = RegisteredObserver(observer, delivery: delivery)
        records[identifier] = record
        let handle = all.add(record)
        if record.isRemoved {
            // Removed by a deinit that ran while the add reclaimed memory.
            all.remove(handle)
            return true
        }
        for (key, view) in views {
            addLocked(record, to: view, key: key)
        }
        return true
    }

    /// ``addObserver(_:delivery:)->Bool`` with a queue: `nil` means the thread
    /// calling `withObservers`.
    @discardableResult
    public func addObserver(_ observer: any AnyObject & Sendable, queue: DispatchQueue?) -> Bool {
        addObserver(observer, delivery: Delivery(queue: queue))
    }

    /// Registers every observer of `observers`; returns how many were new.
    @discardableResult
    public func addObserver(_ observers: [any AnyObject & Sendable], delivery: Delivery = .synchronous) -> Int {
        observers.reduce(0) { $0 + (addObserver($1, delivery: delivery) ? 1 : 0) }
    }

    /// Unregisters `observer`. Returns false (a no-op) when it was not
    /// registered. A `withObservers` that starts after this returns does not
    /// call it; one already running on another thread may.
    @discardableResult
    public func removeObserver(_ observer: AnyObject) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        sweepDeadObserversLocked(force: false)
        guard let record = records.removeValue(forKey: ObjectIdentifier(observer)) else { return false }
        removeLocked(record)
        return true
    }

    /// Unregisters every observer of `observers`; returns how many were
    /// registered.
    @discardableResult
    public func removeObserver(_ observers: [AnyObject]) -> Int {
        observers.reduce(0) { $0 + (removeObserver($1) ? 1 : 0) }
    }

    /// Unregisters every observer; returns how many were registered.
    @discardableResult
    public func removeAllObservers() -> Int {
        lock.lock()
        defer { lock.unlock() }
        let removed = records
        records.removeAll()
        for record in removed.values { removeLocked(record) }
        return removed.count
    }

    // MARK: Inspecting

    /// Registered observers that are still alive. Reading it also drops the
    /// deallocated ones.
    public var observerCount: Int {
        lock.lock()
        defer { lock.unlock() }
        sweepDeadObserversLocked(force: true)
        return records.count
    }

    /// Whether no observer is registered, dead ones dropped first when a
    /// send has reported one (cheaper than ``observerCount``, which checks
    /// every observer).
    var isEmpty: Bool {
        lock.lock()
        defer { lock.unlock() }
        sweepDeadObserversLocked(force: false)
        return records.isEmpty
    }

    /// Whether `observer` is registered.
    public func contains(_ observer: AnyObject) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return records[ObjectIdentifier(observer)] != nil
    }

    // MARK: Calling observers

    /// Calls `body` on this thread, before returning, with every observer
    /// registered with synchronous delivery (the default) that conforms to
    /// `P`, the type of the closure's parameter:
    ///
    /// ```swift
    /// registry.withObservers { (observer: TemperatureObserver) in
    ///     observer.temperatureChanged(to: 21.5)
    /// }
    /// ```
    ///
    /// `body` does not escape (as in Flowduino, so it may use `self`
    /// implicitly). Observers added with a queue or the main actor are not
    /// called here, because calling them means running `body` later,
    /// elsewhere: ``dispatchToObservers(_:)`` reaches every observer.
    ///
    /// Takes no lock and never waits. The first call for a given `P` builds
    /// that protocol's list (one cast per registered observer); later calls
    /// do no casts at all.
    @inlinable
    public func withObservers<P>(_ body: (P) -> Void) {
        view(for: P.self).sendSynchronously(body)
    }

    /// Calls `body` with every observer conforming to `P`, each where its
    /// ``Delivery`` says: synchronous observers on this thread before
    /// returning, the others enqueued on their queue or the main actor
    /// (probed again there, so one deallocated meanwhile is not called).
    /// `body` escapes and may run on several threads at once, so it is
    /// `@Sendable`.
    @inlinable
    public func dispatchToObservers<P>(_ body: @escaping @Sendable (P) -> Void) {
        view(for: P.self).send(body)
    }

    /// The view of observers conforming to `P`, made on first use.
    /// Lock-free unless it has to be made.
    @inlinable
    func view<P>(for type: P.Type) -> ProtocolView<P> {
        existingView(for: type) ?? makeView(for: type)
    }

    /// The view of observers conforming to `P` if it was made; lock-free.
    @inlinable
    func existingView<P>(for type: P.Type) -> ProtocolView<P>? {
        let key = ObjectIdentifier(type)
        // Acquire: pairs with the release that published the node, so its
        // fields (and the view's list) are visible.
        var node = viewHead.load(ordering: .acquiring)
        while let current = node {
            let found = current._withUnsafeGuaranteedRef { $0.key == key ? $0.view : nil }
            if let found { return unsafeDowncast(found, to: ProtocolView<P>.self) }
            node = current._withUnsafeGuaranteedRef { $0.next }
        }
        return nil
    }

    @usableFromInline
    func makeView<P>(for type: P.Type) -> ProtocolView<P> {
        lock.lock()
        defer { lock.unlock() }
        let key = ObjectIdentifier(type)
        if let existing = viewsByKey[key] {
            return unsafeDowncast(existing, to: ProtocolView<P>.self)
        }
        sweepDeadObserversLocked(force: false)
        let view = ProtocolView<P>(deadFlag: deadFlag)
        // Known to writers before it is filled, so that an observer added by
        // a deinit running while it is filled goes into it like any other
        // add; published to readers only once filled, so that a concurrent
        // first `withObservers` waits here (for the lock) instead of seeing
        // a partial list.
        viewsByKey[key] = view
        views.append((key, view))
        var registered: [RegisteredObserver] = []
        all.forEachBox { box in registered.append(unsafeDowncast(box, to: RegisteredObserver.self)) }
        for record in registered {
            addLocked(record, to: view, key: key)
        }
        // Linked at the head now (not before filling: a view made by a
        // callback during the filling was linked meanwhile). Release: a
        // reader that acquires the node sees the filled list.
        let node = ProtocolViewNode(key: key, view: view, next: viewHead.load(ordering: .relaxed))
        nodes.append(node)
        viewHead.store(Unmanaged.passUnretained(node), ordering: .releasing)
        return view
    }

    // MARK: Writer internals (lock held)

    private func addLocked(_ record: RegisteredObserver, to view: ProtocolViewBase, key: ObjectIdentifier) {
        guard !record.isRemoved, record.viewHandles[key] == nil else { return }
        guard let handle = view.addIfConforming(record) else { return }
        if record.isRemoved {
            view.slots.remove(handle)
        } else {
            record.viewHandles[key] = handle
        }
    }

    private func removeLocked(_ record: RegisteredObserver) {
        guard !record.isRemoved else { return }
        record.isRemoved = true
        all.remove(record.handle)
        let handles = record.viewHandles
        record.viewHandles.removeAll()
        for (key, handle) in handles {
            viewsByKey[key]?.slots.remove(handle)
        }
    }

    /// Drops observers found deallocated: all of them when `force`,
    /// otherwise only when a send has reported one since the last sweep.
    private func sweepDeadObserversLocked(force: Bool) {
        guard deadFlag.take() || force else { return }
        for record in Array(records.values) where !record.observer.isAlive {
            if records[record.identifier] === record {
                records.removeValue(forKey: record.identifier)
            }
            removeLocked(record)
        }
    }
}
