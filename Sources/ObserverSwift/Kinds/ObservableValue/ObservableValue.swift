import Dispatch
import Foundation

#if canImport(Observation)
    import Observation
#endif

/// A value that notifies its subscribers whenever it is set: SwiftEvents'
/// `Observable<T>` and the minimal `Observable<T>(value:)` recipe, on the
/// lock-free core. (It is not called `Observable` so that a file can import
/// both ObserverSwift and Swift's `Observation` module.)
///
/// ```swift
/// final class Label: @unchecked Sendable { var text = "" }
/// let name = ObservableValue("Ada")
/// let label = Label()
/// name.subscribe(label) { label, name in label.text = name }   // label held weakly
/// name.value = "Grace"                                          // label.text == "Grace"
/// ```
///
/// Threading: every member may be called from any thread. A synchronous
/// handler runs on the setting thread before the setter returns; a handler
/// given a queue or the main actor runs there. Reading ``value`` never waits
/// for handlers.
///
/// Order: sets are serialized. A set from another thread waits until the
/// notification round in progress has ended, so every observer sees the
/// values in the order they were set, each exactly once (unless
/// `skipsDuplicates` drops an unchanged one). Because a round holds the turn
/// while handlers run, a synchronous handler must not block waiting for
/// another thread that sets the same value (or for two values whose handlers
/// set each other, set from two threads at once): that would deadlock, as
/// with any lock held around callbacks. Queue and main-actor handlers do not
/// hold the turn.
///
/// Reentrancy: a handler may set the same value again. The new value is
/// stored at once (``value`` returns it) and delivered to every observer
/// right after the round in progress ends, on the same thread, before the
/// outer setter returns — never nested inside the round, so no observer sees
/// the values out of order. A handler may also subscribe or cancel
/// subscriptions (a new observer is not called by the round in progress).
public final class ObservableValue<Value> {
    /// The observers: one slot list in the core, as for every observer kind.
    @usableFromInline
    let changes = Event<Value>()

    @usableFromInline
    let turn = NotificationTurn()

    /// The stored value: written by the thread holding the turn, read by
    /// any thread without waiting for it.
    @usableFromInline
    let storage: ValueStorage<Value>

    /// Makes ``value`` visible to Swift's Observation (`withObservationTracking`,
    /// SwiftUI): reads register access, sets announce the mutation.
    @usableFromInline
    let observation = ValueObservation.make()

    /// Non-nil when sets of an equal value are skipped.
    @usableFromInline
    let isDuplicate: ((Value, Value) -> Bool)?

    /// Values set by handlers during a round, delivered after it. Touched
    /// only by the thread holding the turn.
    @usableFromInline
    @exclusivity(unchecked)
    var pending: [Value] = []

    /// The value of the latest round started (what a new observer replays).
    /// Touched only by the thread holding the turn.
    @usableFromInline
    @exclusivity(unchecked)
    var lastDelivered: Value

    /// Creates an observable value holding `value`.
    public init(_ value: Value) {
        storage = ValueStorage(value)
        lastDelivered = value
        isDuplicate = nil
    }

    init(value: Value, isDuplicate: @escaping (Value, Value) -> Bool) {
        storage = ValueStorage(value)
        lastDelivered = value
        self.isDuplicate = isDuplicate
    }

    /// The current value. Setting it notifies every observer (see the type's
    /// notes on order and reentrancy); reading it never waits for handlers.
    @inlinable
    public var value: Value {
        get {
            observation.access()
            return storage.read()
        }
        set {
            assign(newValue)
        }
    }

    // MARK: The set path

    @inlinable
    func assign(_ newValue: Value) {
        // The reader identifies the calling thread while it runs.
        let reader = SectionReader.current
        let thread = reader.threadIdentity
        if turn.isHeld(by: thread) {
            // A handler of this value's round on this thread: queue behind it.
            if store(newValue, fenced: false) { pending.append(newValue) }
            return
        }
        if turn.admitsFastClaim {
            // One barrier enters the read section and claims the turn.
            if reader.beginClaiming(turn) {
                if store(newValue, fenced: true) {
                    lastDelivered = newValue
                    changes.send(newValue, inSectionOf: reader)
                }
                deliverPending()
                turn.release()
                // As below: the section ends after the turn is released.
                reader.end()
                return
            }
            // Taken: leave the section before waiting for the turn.
            reader.end()
        }
        turn.acquire(by: thread)
        // While the turn is held, this thread counts as inside a delivery
        // (a read section): Observation's `onChange`, `==` and handlers run
        // here, and a wait for in-flight deliveries made from them must throw
        // rather than wait for a sender that waits for this turn. The section
        // ends after the turn is released, so deinits it runs hold nothing.
        reader.begin()
        if store(newValue, fenced: true) {
            deliver(newValue)
            deliverPending()
        }
        turn.release()
        reader.end()
    }

    /// Stores `newValue` unless it is a skipped duplicate; true when stored.
    /// Holding the turn; `fenced`: the turn was claimed since the last store.
    @inlinable
    @inline(__always)
    func store(_ newValue: Value, fenced: Bool) -> Bool {
        // Stores are serialized by the turn: the writer reads its own copy.
        if let isDuplicate, isDuplicate(storage.writerValue, newValue) { return false }
        let announces = observation.isArmed
        if announces { observation.willSet() }
        let replaced = storage.write(newValue, fenced: fenced)
        if announces { observation.didSet() }
        // The replaced value is released here, outside any section or lock:
        // its deinit may read or set this value.
        withExtendedLifetime(replaced) {}
        return true
    }

    /// One round: every observer present now gets `value`. Holding the turn.
    @inlinable
    func deliver(_ value: Value) {
        lastDelivered = value
        changes.send(value)
    }

    /// Delivers what handlers set during the rounds, in order. Holding the turn.
    @inlinable
    @inline(__always)
    func deliverPending() {
        if !pending.isEmpty { deliverPendingValues() }
    }

    @usableFromInline
    func deliverPendingValues() {
        var index = 0
        while index < pending.count {
            // Read by index each time: handlers may append while we deliver.
            let next = pending[index]
            deliver(next)
            index += 1
        }
        pending.removeAll()
    }

    /// Runs `body` holding the turn (or inside the round this thread already
    /// runs), then delivers what `body` caused to be set. For replaying binds.
    func withTurn<Result>(_ body: (_ current: Value) -> Result) -> Result {
        let reader = SectionReader.current
        let thread = reader.threadIdentity
        if turn.isHeld(by: thread) {
            // The enclosing round delivers whatever `body` sets.
            return body(lastDelivered)
        }
        turn.acquire(by: thread)
        // Inside a delivery while the turn is held (see `assign`).
        reader.begin()
        let result = body(lastDelivered)
        deliverPending()
        turn.release()
        reader.end()
        return result
    }
}

extension ObservableValue: @unchecked Sendable where Value: Sendable {}

#if canImport(Observation)
    /// `withObservationTracking { _ = value.value } onChange: { ... }` fires when
    /// the value is set, so Observation-based code (SwiftUI views, `@Observable`
    /// models reading it) sees ObserverSwift values change. Where Observation
    /// exists: macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, and every
    /// other platform whose toolchain has the module.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    extension ObservableValue: Observation.Observable {}
#endif
// @unchecked: `storage` has one writer (the turn's holder) and lock-free
// readers (see `ValueStorage`); `pending` and
// `lastDelivered` are touched only by the thread holding `turn`; the
// observers live in the internally synchronized core.
