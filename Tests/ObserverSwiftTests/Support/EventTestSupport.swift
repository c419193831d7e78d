import Foundation

import ObserverEngine
@testable import ObserverSwift

/// Counts instances alive, to prove a handler's captures are released.
final class LifetimeTracker: Sendable {
    static let alive = HeapAtomicWord<Int>(0)
    let id: Int

    init(id: Int = 0) {
        self.id = id
        Self.alive.wrappingAdd(1, ordering: .relaxed)
    }

    deinit {
        Self.alive.wrappingSubtract(1, ordering: .relaxed)
    }
}

/// Runs `body` on a new OS thread and returns a way to wait for it.
@discardableResult
func spawnThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.start()
    return done
}

/// A shareable atomic counter.
final class AtomicCounter: Sendable {
    private let storage = HeapAtomicWord<Int>(0)
    func increment() { storage.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { storage.load(ordering: .relaxed) }
}
