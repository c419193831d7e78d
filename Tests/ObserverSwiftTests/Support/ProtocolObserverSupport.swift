import Foundation
import ObserverTestSupport

@testable import ObserverSwift

// Observers of the protocol-typed observer tests (with ObserverTestSupport's protocols,
// `RecordingObserver` and its observers).

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
