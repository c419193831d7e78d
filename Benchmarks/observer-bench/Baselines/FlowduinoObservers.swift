import Foundation

/// FLOWDUINO: the structure of Flowduino/Observable's thread-safe
/// `ObservableClass`: a dictionary of weak references keyed by
/// `ObjectIdentifier`, guarded by a lock; adding inserts, removing removes,
/// `withObservers` walks the dictionary and casts every observer with `as?`.
final class FlowduinoObservers: @unchecked Sendable {
    // @unchecked: `observers` is guarded by `lock`.
    private struct ObserverContainer {
        weak var observer: AnyObject?
    }

    private let lock = NSLock()
    private var observers: [ObjectIdentifier: ObserverContainer] = [:]

    func addObserver(_ observer: AnyObject) {
        lock.lock()
        observers[ObjectIdentifier(observer)] = ObserverContainer(observer: observer)
        lock.unlock()
    }

    /// True when `observer` was registered.
    func removeObserver(_ observer: AnyObject) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return observers.removeValue(forKey: ObjectIdentifier(observer)) != nil
    }

    func withObservers<T>(_ code: (T) -> Void) {
        lock.lock()
        let snapshot = observers
        lock.unlock()
        for (_, container) in snapshot {
            if let typed = container.observer as? T { code(typed) }
        }
    }
}
