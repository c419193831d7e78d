import Foundation
import ObserverEngine
import ObserverTestSupport

@testable import ObserverSwift

/// A key whose hash is the same for every value: every key collides, so
/// only `==` can tell them apart.
struct CollidingKey: Hashable, Sendable {
    let id: Int
    func hash(into hasher: inout Hasher) { hasher.combine(42) }
    static func == (lhs: CollidingKey, rhs: CollidingKey) -> Bool { lhs.id == rhs.id }
}

/// A reference-type key that counts its deinitializations, to prove that a
/// removed key is released by the core.
final class TrackedKey: Hashable, Sendable {
    static let deinits = HeapAtomicWord<Int>(0)
    let id: Int
    init(_ id: Int) { self.id = id }
    deinit { TrackedKey.deinits.wrappingAdd(1, ordering: .relaxed) }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
    static func == (lhs: TrackedKey, rhs: TrackedKey) -> Bool { lhs.id == rhs.id }
}

/// A thread-safe tally of deliveries per name.
final class KeyedTally: Sendable {
    private let counts = Locked<[String: Int]>([:])
    func add(_ name: String, _ amount: Int = 1) { counts.withLock { $0[name, default: 0] += amount } }
    subscript(name: String) -> Int { counts.withLock { $0[name, default: 0] } }
    var all: [String: Int] { counts.withLock { $0 } }
}

/// An object to subscribe as a weak target; records what it is handed, from
/// any thread.
final class KeyedTarget: Sendable {
    let received = Received<String>()
}

/// A shareable atomic counter (a `HeapAtomicWord` cannot live in an array).
final class KeyedCounter: Sendable {
    private let count = HeapAtomicWord<Int>(0)
    func increment() { count.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
