import ObserverEngine
import ObserverSwift

/// Live-instance counting and poisoning for the reliability tests.
///
/// Every handler the reliability tests subscribe captures a
/// `ReliabilityTrackedCapture`. Its initializer increments
/// `ReliabilityLiveInstances.count`; its deinit writes a poison value into its
/// canary and decrements the count. So:
/// - after everything is unsubscribed and `ObserverCore.reclaimNow()` ran, the
///   count is back at its baseline, or a box leaked (count too high) or was
///   released twice / early (count too low);
/// - a handler that runs after its box was released (a missing grace period)
///   finds the poison instead of the live canary and counts a poisoned
///   delivery, instead of passing by luck.
enum ReliabilityLiveInstances {
    /// Live `ReliabilityTrackedCapture` instances in the process.
    static let count = HeapAtomicWord<Int>(0)
    /// Deliveries that found a poisoned (released) capture.
    static let poisonedDeliveries = HeapAtomicWord<Int>(0)

    static var current: Int { count.load(ordering: .sequentiallyConsistent) }
    static var poisoned: Int { poisonedDeliveries.load(ordering: .sequentiallyConsistent) }
}

/// An object captured by a handler so that its release is observable.
final class ReliabilityTrackedCapture: Sendable {
    static let aliveCanary: UInt64 = 0xA11C_E5A1_1AE5_0001
    static let poisonCanary: UInt64 = 0xDEAD_DEAD_DEAD_DEAD

    // Atomic so a (buggy) concurrent deinit and a handler's check are a
    // detectable logic failure, not undefined behaviour in the test itself.
    private let canary = HeapAtomicWord<UInt64>(ReliabilityTrackedCapture.aliveCanary)

    init() {
        ReliabilityLiveInstances.count.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    deinit {
        canary.store(Self.poisonCanary, ordering: .sequentiallyConsistent)
        ReliabilityLiveInstances.count.wrappingSubtract(1, ordering: .sequentiallyConsistent)
    }

    /// Called by handlers on every delivery: counts a poisoned delivery when
    /// the capture was already released.
    @inline(never)
    func checkIntact() {
        if canary.load(ordering: .relaxed) != Self.aliveCanary {
            ReliabilityLiveInstances.poisonedDeliveries.wrappingAdd(1, ordering: .relaxed)
        }
    }
}

/// A weakly held subscription target for the reliability tests. `onDeinit`
/// runs inside deinit, i.e. at the moment weak references to it start
/// returning nil (used to record "the removal returned here").
final class ReliabilityTarget: @unchecked Sendable {
    // @unchecked: `onDeinit` is set once before the target is shared.
    let identifier: Int
    var onDeinit: (@Sendable () -> Void)?

    init(identifier: Int = 0, onDeinit: (@Sendable () -> Void)? = nil) {
        self.identifier = identifier
        self.onDeinit = onDeinit
    }

    deinit {
        onDeinit?()
    }
}
