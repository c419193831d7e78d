import Synchronization

/// LOCKED: what most thread-safe observer libraries do. A
/// `Synchronization.Mutex` around an array of (id, closure); a send copies the
/// array under the lock (one retain of its buffer) and calls the closures
/// outside it, so a handler may subscribe or unsubscribe without deadlock.
/// Unsubscribing searches the array.
final class LockedObservers: Sendable {
    typealias Handler = (Int) -> Void

    /// The guarded state. `@unchecked Sendable`: handlers are plain closures
    /// (as ObserverSwift's are); the mutex is what makes access safe.
    struct State: @unchecked Sendable {
        var nextID = 0
        var entries: [(id: Int, handler: Handler)] = []
    }

    private let state = Mutex(State())

    @discardableResult
    func subscribe(_ handler: @escaping Handler) -> Int {
        let entry = UncheckedSendableHandler(handler)
        return state.withLock { state in
            state.nextID += 1
            state.entries.append((state.nextID, entry.handler))
            return state.nextID
        }
    }

    /// Removes the subscription `id`; false when there is none.
    @discardableResult
    func unsubscribe(_ id: Int) -> Bool {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.id == id }) else { return false }
            state.entries.remove(at: index)
            return true
        }
    }

    @inline(__always)
    func send(_ value: Int) {
        let snapshot = state.withLock { $0 }
        for entry in snapshot.entries {
            entry.handler(value)
        }
    }
}

/// Carries a non-Sendable handler into a mutex (the mutex provides safety).
struct UncheckedSendableHandler: @unchecked Sendable {
    let handler: (Int) -> Void
    init(_ handler: @escaping (Int) -> Void) { self.handler = handler }
}

extension Contender {
    static func locked(count: Int, sink: Sink) -> Contender {
        let observers = LockedObservers()
        for _ in 0..<count { observers.subscribe { value in sink.total &+= value } }
        return Contender(
            implementation: "LOCKED", deliveriesPerSend: count,
            send: { sends in lockedSend(observers, sends: sends) },
            checksum: { sink.total })
    }
}

@inline(never)
func lockedSend(_ observers: LockedObservers, sends: Int) {
    for value in stride(from: 1, through: sends, by: 1) {
        observers.send(value)
    }
}
