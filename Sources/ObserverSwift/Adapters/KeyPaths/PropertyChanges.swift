import Dispatch
import Foundation

/// The observable storage of one ``ObservableProperty``: its value and its
/// observers (a slot list in the C core). It is the wrapper's projected
/// value: `$title.value`, `$title.observe { old, new in }`.
///
/// ```swift
/// final class Profile: KeyPathObservable {
///     @ObservableProperty var name = "anonymous"
/// }
/// let profile = Profile()
/// let observer = profile.$name.observe { old, new in print(old, "→", new) }
/// profile.name = "ada"            // prints "anonymous → ada"
/// ```
///
/// Threading: `value` may be read and written from any thread; each write
/// swaps the value under a lock, so every notification carries a consistent
/// (old, new) pair. Observers run on the writing thread, after the lock is
/// released, unless given a queue. Writes from several threads at once may
/// notify in a different order than they swapped. `+=` and similar are a
/// read then a write (not atomic): use ``modify(_:)`` to update atomically.
public final class PropertyChanges<Value>: @unchecked Sendable {
    // @unchecked: `storage` is only touched under `lock`; the slot list is
    // internally synchronized. Handlers run per the documented contract.

    @usableFromInline
    let slots = SlotList<PropertySubscriber<Value>>()
    @usableFromInline
    let lock = NSLock()
    @usableFromInline
    var storage: Value

    /// Creates the storage with an initial value (no notification).
    public init(_ value: Value) {
        storage = value
    }

    /// The current value. Setting it notifies every active observer with
    /// the old and the new value, also when they are equal.
    public var value: Value {
        @inlinable get {
            lock.lock()
            defer { lock.unlock() }
            return storage
        }
        @inlinable set {
            let old = exchange(newValue)
            send(old: old, new: newValue)
        }
    }

    /// Updates the value atomically with respect to other writers, then
    /// notifies once with the value before and after.
    public func modify(_ body: (inout Value) throws -> Void) rethrows {
        lock.lock()
        let old = storage
        do {
            try body(&storage)
        } catch {
            lock.unlock()
            throw error
        }
        let new = storage
        lock.unlock()
        send(old: old, new: new)
    }

    /// Observes changes of this property (what `observe(\.$property)` calls).
    ///
    /// - Parameters:
    ///   - activate: start observing at once (default true, like KVO's
    ///     `observe`); pass false to start it later with `activate()`.
    ///   - handler: receives the old and the new value of each write, on the
    ///     writing thread, synchronously inside the write.
    /// - Returns: the observer; keep it: releasing it stops the observation.
    public func observe(
        activate: Bool = true, _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        makeObserver(keyPath: nil, delivery: .synchronous, activate: activate, handler)
    }

    func makeObserver(
        keyPath: AnyKeyPath?, delivery: Delivery, activate: Bool, _ handler: @escaping @Sendable (Value, Value) -> Void
    ) -> KeyPathObserver {
        let box = PropertySubscriber(list: slots, delivery: delivery, handler: handler)
        let observer = KeyPathObserver(list: slots, box: box, keyPath: keyPath)
        if activate { observer.activate() }
        return observer
    }

    /// Active observers of this property.
    public var observersCount: Int { slots.liveCount }

    @inlinable
    func exchange(_ newValue: Value) -> Value {
        lock.lock()
        defer { lock.unlock() }
        let old = storage
        storage = newValue
        return old
    }

    /// The send path (as `Event.send`): lock-free, boxes borrowed at +0.
    @inlinable
    func send(old: Value, new: Value) {
        slots.send { $0.receive(old: old, new: new) }
    }
}

extension PropertyChanges where Value: Sendable {
    /// ``observe(activate:_:)`` with `handler` run on `queue` (nil: the
    /// writing thread). The values cross to the queue, so they must be `Sendable`.
    public func observe(
        queue: DispatchQueue?, activate: Bool = true,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> KeyPathObserver {
        makeObserver(keyPath: nil, delivery: Delivery(queue: queue), activate: activate, handler)
    }
}
