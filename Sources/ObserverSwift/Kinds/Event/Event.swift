import Dispatch
import ObserverEngine

/// A typed event: observers subscribe closures, senders call ``send(_:)``.
///
/// `Event` keeps SwiftEvents' names (`subscribe`, `unsubscribe`,
/// `subscribersCount`, `triggersCount`, ...); with the ObserverSwiftCompat
/// product's `trigger`, `notify` and `EventTS`, code written for SwiftEvents
/// compiles after changing its import to `import ObserverSwiftCompat`.
///
/// ```swift
/// final class Screen: Sendable {
///     func show(_ title: String) { print("showing", title) }
/// }
/// let titleChanged = Event<String>()
/// let screen = Screen()
/// titleChanged.subscribe(screen) { screen, title in screen.show(title) }
/// let token = titleChanged.subscribe { title in print("title:", title) }
/// titleChanged.send("Inbox")      // both handlers run, on this thread
/// token.cancel()
/// ```
///
/// Threading: every method may be called from any thread at any time. A
/// handler runs on the sending thread, inside `send`, unless it was given a
/// queue or the main actor. Sends never take a lock and never wait for
/// subscribers being added or removed.
///
/// Reentrancy: a handler may send again (to this or any event), subscribe,
/// cancel itself or others, or unsubscribe all. A subscription added during a
/// send is not called by that send; one removed during a send may or may not
/// be called by it, and is never called by a send that starts afterwards.
public final class Event<Value> {
    @usableFromInline
    typealias Slots = EventObservers<Value>.Slots

    /// First stored property: the words of `triggers` and of the observers
    /// word (see `AtomicWord` and ``EventObservers``). Nothing else: an
    /// event with no subscriber is 40 bytes (a 48-byte heap block); one
    /// plain closure subscriber adds its sole handler (48), the second
    /// subscription the slot list; the trigger counter's padded lines come
    /// with the first send from a second thread.
    @usableFromInline
    var words = Words()

    @usableFromInline
    typealias Words = EventObserverWords

    /// The subscriptions and the trigger count, on `words`.
    @inlinable
    var observers: EventObservers<Value> { EventObservers(keptFirstBy: self) }

    @inlinable
    var triggers: TriggerCounter { observers.triggers }

    /// Creates an event with no subscribers.
    public init() {}

    deinit {
        observers.release()
    }

    /// Calls `body` with the slot list borrowed (no retain), or returns nil
    /// when nobody ever subscribed. The send path.
    @inlinable @inline(__always)
    func withExistingSlots<Result>(_ body: (Slots) -> Result) -> Result? {
        observers.withExistingSlots(body)
    }

    /// The slot list, made now if nobody subscribed yet. Writers only.
    @usableFromInline
    var slots: Slots { observers.slots }

    // MARK: Sending

    /// Calls every subscription that existed when the send started.
    ///
    /// Synchronous subscriptions run on the calling thread before this
    /// returns, in subscription-slot order; queued ones are enqueued.
    @inlinable
    public func send(_ value: Value) {
        // The reader first: the words' addresses are then computed after
        // the thread-local lookup, not kept across it.
        let reader = SectionReader.current
        observers.send(value, as: reader)
    }

    // MARK: Unsubscribing

    /// Removes every subscription made for `target`; returns how many.
    /// A target never subscribed is a no-op (returns 0), also when it lives
    /// at the address of a deallocated target whose subscription is still
    /// stored (that one is freed as expired, not counted).
    @discardableResult
    public func unsubscribe(_ target: AnyObject) -> Int {
        observers.unsubscribe(target)
    }

    /// Removes every subscription; returns how many were stored.
    @discardableResult
    public func unsubscribeAll() -> Int {
        observers.unsubscribeAll()
    }

    // MARK: Counting

    /// Subscriptions that can still deliver: not cancelled, target alive,
    /// limit not spent. Reading it also frees slots of dead targets.
    public var subscribersCount: Int { observers.subscribersCount }

    /// How many times ``send(_:)`` was called: exact once the sending
    /// threads are done (joined, or otherwise ordered before this read).
    /// While threads send, each counts on its own cache line and this reads
    /// them one after the other: a value between the count when the read
    /// began and the count when it ended.
    public var triggersCount: Int { triggers.value }

    /// Sets ``triggersCount`` back to zero.
    public func resetTriggersCount() {
        triggers.reset()
    }

    // MARK: The engine's entry points (ObserverSource)

    @inlinable
    public func _subscribe(
        delivery: Delivery, limit: Int?, replaying current: Value?, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        observers.subscribeClosure(delivery: delivery, limit: limit, replaying: current, handler)
    }

    @inlinable
    public func _subscribe<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, replaying current: Value?,
        _ handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        observers.subscribeTarget(target, delivery: delivery, limit: limit, replaying: current, handler)
    }
}

/// Every subscription form (closure, weak target or actor; on the sending
/// thread, a queue, the main actor or an actor; `limit:`) comes from
/// ``ObserverSource``.
extension Event: ObserverSource {}

extension Event: @unchecked Sendable where Value: Sendable {}
// @unchecked: all state is the internally synchronized C list and an atomic.
