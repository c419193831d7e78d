import Synchronization

/// CAST: Flowduino's `withObservers`. Observers of any class are held weakly
/// in a dictionary keyed by identity; a send copies it under a lock and, per
/// observer, loads the weak reference and casts it with `as? Protocol`
/// (a dynamic cast with a conformance lookup) before calling the protocol.
///
/// The baseline the protocol-typed observers (`withObservers`) are measured
/// against.
final class CastObservers: Sendable {
    final class Entry {
        weak var observer: AnyObject?

        init(_ observer: AnyObject) {
            self.observer = observer
        }
    }

    /// `@unchecked Sendable`: guarded by the mutex.
    struct State: @unchecked Sendable {
        var entries: [ObjectIdentifier: Entry] = [:]
    }

    private let state = Mutex(State())

    func addObserver(_ observer: AnyObject) {
        let entry = UncheckedSendableBox(Entry(observer))
        state.withLock { $0.entries[ObjectIdentifier(observer)] = entry.value }
    }

    func removeObserver(_ observer: AnyObject) {
        state.withLock { _ = $0.entries.removeValue(forKey: ObjectIdentifier(observer)) }
    }

    /// Calls `body` with every live observer that conforms to `Protocol`.
    @inline(__always)
    func withObservers<Protocol>(_ type: Protocol.Type, _ body: (Protocol) -> Void) {
        let snapshot = state.withLock { $0 }
        for entry in snapshot.entries.values {
            if let observer = entry.observer as? Protocol {
                body(observer)
            }
        }
    }
}

extension Contender {
    static func cast(targets: [Target]) -> Contender {
        let observers = CastObservers()
        for target in targets { observers.addObserver(target) }
        return Contender(
            implementation: "CAST", deliveriesPerSend: targets.count,
            send: { sends in castSend(observers, sends: sends) },
            checksum: { targetsTotal(targets) })
    }
}

@inline(never)
func castSend(_ observers: CastObservers, sends: Int) {
    for value in stride(from: 1, through: sends, by: 1) {
        observers.withObservers((any IntObserving).self) { $0.observe(value) }
    }
}
