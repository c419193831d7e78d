import Synchronization

/// WEAK: a dictionary of weak references keyed by the target's identity,
/// SwiftEvents / Flowduino style. A send copies the dictionary under a lock,
/// then for every entry loads the weak reference and, if the target is
/// alive, calls the handler with it.
final class WeakObservers<Observed: AnyObject>: Sendable {
    typealias Handler = (Observed, Int) -> Void

    final class Entry {
        weak var target: Observed?
        let handler: Handler

        init(target: Observed, handler: @escaping Handler) {
            self.target = target
            self.handler = handler
        }
    }

    /// `@unchecked Sendable`: guarded by the mutex; entries are immutable
    /// apart from the weak reference, whose loads are thread-safe.
    struct State: @unchecked Sendable {
        var entries: [ObjectIdentifier: Entry] = [:]
    }

    private let state = Mutex(State())

    func subscribe(_ target: Observed, handler: @escaping Handler) {
        let entry = UncheckedSendableBox(Entry(target: target, handler: handler))
        state.withLock { $0.entries[ObjectIdentifier(target)] = entry.value }
    }

    /// Removes `target`'s subscription; false when there is none.
    @discardableResult
    func unsubscribe(_ target: Observed) -> Bool {
        state.withLock { $0.entries.removeValue(forKey: ObjectIdentifier(target)) != nil }
    }

    @inline(__always)
    func send(_ value: Int) {
        let snapshot = state.withLock { $0 }
        for entry in snapshot.entries.values {
            if let target = entry.target {
                entry.handler(target, value)
            }
        }
    }
}

/// Moves a non-Sendable value into a mutex (the mutex provides safety).
struct UncheckedSendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension Contender {
    static func weak(targets: [Target]) -> Contender {
        let observers = WeakObservers<Target>()
        for target in targets {
            observers.subscribe(target) { target, value in target.total &+= value }
        }
        return Contender(
            implementation: "WEAK", deliveriesPerSend: targets.count,
            send: { sends in weakSend(observers, sends: sends) },
            checksum: { targetsTotal(targets) })
    }
}

@inline(never)
func weakSend(_ observers: WeakObservers<Target>, sends: Int) {
    for value in stride(from: 1, through: sends, by: 1) {
        observers.send(value)
    }
}

func targetsTotal(_ targets: [Target]) -> Int {
    targets.reduce(0) { $0 &+ $1.total }
}
