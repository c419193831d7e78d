import Dispatch
import Foundation
import ObserverEngine

/// The observable storage of one ``ObservableProperty``: its value and its
/// observers (a slot list in the C core). It is the wrapper's projected
/// value: `$title.value`, `$title.modify { }`, and what
/// `observe(\.$title) { old, new in }` observes.
///
/// ```swift
/// final class Profile: KeyPathObservable {
///     @ObservableProperty var visits = 0
/// }
/// let profile = Profile()
/// let observer = profile.observe(\.$visits) { old, new in print(old, "→", new) }
/// profile.$visits.modify { $0 += 1 }   // prints "0 → 1", atomic among writers
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
    init(_ value: Value) {
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

    /// An observer of this property (what `observe(\.$property)` returns).
    func makeObserver(
        delivery: Delivery, activate: Bool, _ handler: @escaping @Sendable (Value, Value) -> Void
    ) -> KeyPathObserver {
        let box = PropertySubscriber(list: slots, delivery: delivery, handler: handler)
        let observer = KeyPathObserver(list: slots, box: box)
        if activate { observer.activate() }
        return observer
    }

    /// Active observers of this property.
    public var subscribersCount: Int { slots.liveCount }

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
