import Foundation

/// Finds the ``PropertyChanges`` behind `\.property` for
/// `observe(\.property)`: Swift cannot map a key path of a wrapped property
/// to its wrapper, so `observe` reads the property once with the probe armed,
/// and the wrapper's getter reports itself (the technique of Swift's own
/// observation tracking). Disarmed, the getter pays one relaxed atomic load.
@usableFromInline
enum PropertyAccessProbe {
    struct Access: @unchecked Sendable {
        // @unchecked: `changes` is a thread-safe PropertyChanges; key paths
        // and metatypes are immutable.
        let changes: AnyObject
        let keyPath: AnyKeyPath
        /// Whether a key path rooted at the given type may name this property
        /// (the type is the declaring class or a subclass of it).
        let acceptsRoot: (Any.Type) -> Bool
    }

    /// One probing thread and the accesses its read made.
    struct Probe: @unchecked Sendable {
        // @unchecked: `pthread_t` is a plain thread identifier.
        let thread: pthread_t
        var accesses: [Access] = []
    }

    /// Threads probing now.
    @usableFromInline
    static let armed = HeapAtomicWord<Int>(0)
    private static let probes = Locked<[Probe]>([])

    @usableFromInline
    static var isArmed: Bool {
        // Relaxed: the probing thread sees its own increment in program
        // order; other threads seeing it only costs them a lookup.
        armed.load(ordering: .relaxed) != 0
    }

    /// Called by the wrapper's getter while some thread probes; records the
    /// access only when the calling thread is the one probing.
    @usableFromInline
    static func record<Owner: AnyObject>(_ changes: AnyObject, keyPath: AnyKeyPath, owner: Owner.Type) {
        let me = pthread_self()
        probes.withLock { probes in
            guard let index = probes.lastIndex(where: { pthread_equal($0.thread, me) != 0 }) else { return }
            probes[index].accesses.append(
                Access(changes: changes, keyPath: keyPath, acceptsRoot: { $0 is Owner.Type }))
        }
    }

    /// The property storage `read` reports for `keyPath` of `Root`: the
    /// access whose key path is `keyPath` itself; or, for a key path written
    /// with a subclass as root (`\Sub.inherited` differs from
    /// `\Base.inherited`), the only access made, when it was declared by a
    /// superclass of `Root`.
    static func changes<Root, Value>(
        for keyPath: KeyPath<Root, Value>, read: () -> Void
    ) -> PropertyChanges<Value>? {
        let me = pthread_self()
        probes.withLock { $0.append(Probe(thread: me)) }
        armed.wrappingAdd(1, ordering: .relaxed)
        read()
        armed.wrappingSubtract(1, ordering: .relaxed)
        let mine = probes.withLock { probes -> [Access] in
            guard let index = probes.lastIndex(where: { pthread_equal($0.thread, me) != 0 }) else { return [] }
            return probes.remove(at: index).accesses
        }
        if let exact = mine.first(where: { $0.keyPath == keyPath }) {
            return exact.changes as? PropertyChanges<Value>
        }
        if mine.count == 1, mine[0].acceptsRoot(Root.self), type(of: mine[0].keyPath).rootType != Root.self {
            return mine[0].changes as? PropertyChanges<Value>
        }
        return nil
    }
}
