import Foundation
import ObserverTestSupport

@testable import ObserverSwift

// Protocols and observers of the protocol-typed observer tests (with
// ObserverTestSupport's `AlphaObserver`, `RecordingObserver` and `AlphaOnly`).

protocol BetaObserver: AnyObject {
    func beta(_ value: Int)
}

/// A protocol that is not class-bound: observers of it are found too.
protocol LooseObserver {
    func loose(_ value: Int)
}

final class BetaOnly: RecordingObserver, BetaObserver, @unchecked Sendable {
    func beta(_ value: Int) { record("beta \(value)") }
}

final class AlphaAndBeta: RecordingObserver, AlphaObserver, BetaObserver, LooseObserver, @unchecked Sendable {
    func alpha(_ value: Int) { record("alpha \(value)") }
    func beta(_ value: Int) { record("beta \(value)") }
    func loose(_ value: Int) { record("loose \(value)") }
}

final class Neither: RecordingObserver, @unchecked Sendable {}

/// Tracks which transient observers are alive, to prove none is called
/// after its deinit has started.
final class LivenessLedger: Sendable {
    private let alive = Locked<Set<ObjectIdentifier>>([])
    let callsOnDead = HeapAtomicWord<Int>(0)
    let calls = HeapAtomicWord<Int>(0)

    func born(_ object: AnyObject) { alive.withLock { _ = $0.insert(ObjectIdentifier(object)) } }
    func died(_ object: AnyObject) { alive.withLock { _ = $0.remove(ObjectIdentifier(object)) } }
    func called(_ object: AnyObject) {
        calls.wrappingAdd(1, ordering: .relaxed)
        if !alive.withLock({ $0.contains(ObjectIdentifier(object)) }) {
            callsOnDead.wrappingAdd(1, ordering: .relaxed)
        }
    }
}

/// An observer that reports its calls and its death to a ledger.
final class TransientAlpha: AlphaObserver, @unchecked Sendable {
    // @unchecked: immutable.
    let ledger: LivenessLedger
    init(_ ledger: LivenessLedger) {
        self.ledger = ledger
        ledger.born(self)
    }
    deinit { ledger.died(self) }
    func alpha(_ value: Int) { ledger.called(self) }
}

/// Runs `body` on `count` new threads at once and waits for all of them.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}
