import CObserverCore
import Dispatch
@_spi(EngineDiagnostics) import ObserverEngine
@_spi(EngineDiagnostics) import ObserverSwift
import XCTest

/// Subscribe/unsubscribe cycles (`OBSERVER_MEMORY_CYCLES`, 200k by default,
/// 10M in the long form) keep retired-but-unreleased objects bounded, leak
/// nothing, and leave the resident set flat once a barrier ran.
final class BoundedMemoryTests: XCTestCase {
    /// Retired objects pile up only until the next scan (oc_epoch.h, the scan
    /// policy): while every read section ends, fewer than two windows of
    /// OC_SCAN_RETIRED_OBJECTS plus a writer poll's OC_WRITER_POLL_THRESHOLD
    /// are pending (one window here: no section is active at a scan);
    /// anything over it means reclamation stalled.
    let pendingBound = 2 * Int(OC_SCAN_RETIRED_OBJECTS + OC_WRITER_POLL_THRESHOLD)

    func testSubscribeUnsubscribeCyclesStayBounded() throws {
        let cycles = ReliabilityEnvironment.memoryCycles
        let event = Event<Int>()
        let sink = DeliverySink()
        // A stable subscription keeps sends on the full path (read sections).
        let stable = event.subscribe { value in sink.add(value & 1) }
        try ObserverCore.reclaimNow()
        let liveBaseline = ReliabilityLiveInstances.current

        var maxPending = 0
        func churn(_ count: Int) {
            for cycle in 0..<count {
                let capture = ReliabilityTrackedCapture()
                let token = event.subscribe { _ in capture.checkIntact() }
                if cycle & 15 == 0 { event.send(cycle) }
                token.cancel()
                if cycle & 4095 == 0 {
                    // Grow the slot array to 128 and shrink it back: retires arrays.
                    let burst = (0..<100).map { _ in event.subscribe { _ in } }
                    event.send(1)
                    for token in burst { token.cancel() }
                }
                if cycle & 255 == 0 {
                    maxPending = max(maxPending, ObserverCore.statistics.pendingObjects)
                }
            }
        }

        churn(max(cycles / 10, 1))  // warm up allocator and caches
        try ObserverCore.reclaimNow()
        let residentBefore = try XCTUnwrap(ReliabilityEnvironment.residentBytes, "no resident-size probe here")
        churn(cycles)
        try ObserverCore.reclaimNow()
        let residentAfter = try XCTUnwrap(ReliabilityEnvironment.residentBytes)
        let stats = ObserverCore.statistics

        print(
            "bounded-memory: \(cycles) cycles, max pending \(maxPending), RSS \(residentBefore >> 10) KiB -> \(residentAfter >> 10) KiB"
        )
        XCTAssertLessThanOrEqual(maxPending, pendingBound, "retired objects piled up: reclamation does not keep pace")
        XCTAssertEqual(stats.pendingObjects, 0)
        XCTAssertEqual(ReliabilityLiveInstances.current, liveBaseline, "handler captures leaked")
        XCTAssertEqual(ReliabilityLiveInstances.poisoned, 0)
        if !ReliabilityEnvironment.isSanitized {
            // One leaked box per cycle would be > 10 MB here; 4 MB leaves room
            // for allocator noise only.
            XCTAssertLessThan(residentAfter - residentBefore, 4 << 20, "resident memory grew with the cycle count")
        }
        stable.cancel()
    }
}

extension BoundedMemoryTests {
    /// The same cycles while another thread sends continuously, so that
    /// retirements always race read sections. While a sender is descheduled
    /// inside a section nothing can be released (the documented cost of a
    /// stalled sender), so the peak is scheduling-dependent and only printed;
    /// what must hold is progress: during the second half of the run the
    /// pending count keeps falling back to near zero (a reclamation that stalls
    /// with an active sender would only grow), and a barrier at the end
    /// releases everything.
    func testCyclesWithAConcurrentSenderKeepReclaiming() throws {
        let cycles = max(ReliabilityEnvironment.memoryCycles / 4, 1024)
        let event = Event<Int>()
        let delivered = AtomicCounter()
        let stable = event.subscribe { _ in delivered.increment() }
        try ObserverCore.reclaimNow()
        let liveBaseline = ReliabilityLiveInstances.current
        let stop = AtomicCounter()
        let sender = DispatchGroup()
        DispatchQueue.global().async(group: sender) {
            while stop.value == 0 { event.send(0) }
        }
        var maxPending = 0
        var minPendingSecondHalf = Int.max
        for cycle in 0..<cycles {
            let capture = ReliabilityTrackedCapture()
            let token = event.subscribe { _ in capture.checkIntact() }
            token.cancel()
            if cycle & 255 == 0 {
                let pending = ObserverCore.statistics.pendingObjects
                maxPending = max(maxPending, pending)
                if cycle >= cycles / 2 { minPendingSecondHalf = min(minPendingSecondHalf, pending) }
            }
        }
        // A sender descheduled inside its section for the whole second half
        // (a loaded machine) holds everything back for that long: keep
        // cycling, sender still running, until the pending count falls back
        // or 10 s pass. A reclamation that stalls with an active sender never
        // falls back.
        let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
        var extraCycles = 0
        while minPendingSecondHalf > 64 && DispatchTime.now().uptimeNanoseconds < deadline {
            let capture = ReliabilityTrackedCapture()
            let token = event.subscribe { _ in capture.checkIntact() }
            token.cancel()
            extraCycles += 1
            if extraCycles & 255 == 0 {
                minPendingSecondHalf = min(minPendingSecondHalf, ObserverCore.statistics.pendingObjects)
            }
        }
        stop.increment()
        sender.wait()
        try ObserverCore.reclaimNow()
        print(
            "bounded-memory (concurrent sender): \(extraCycles) extra cycles")
        print(
            "bounded-memory (concurrent sender): \(cycles) cycles, pending peak \(maxPending), second-half low \(minPendingSecondHalf), \(delivered.value) deliveries"
        )
        XCTAssertLessThanOrEqual(
            minPendingSecondHalf, 64, "reclamation stopped making progress while a sender was active")
        XCTAssertEqual(ObserverCore.statistics.pendingObjects, 0)
        XCTAssertEqual(ReliabilityLiveInstances.current, liveBaseline, "handler captures leaked")
        XCTAssertEqual(ReliabilityLiveInstances.poisoned, 0)
        stable.cancel()
    }
}

/// A total the stable handler adds to, so that its work is not optimized away.
final class DeliverySink: Sendable {
    private let total = HeapAtomicWord<Int>(0)
    func add(_ amount: Int) { total.wrappingAdd(amount, ordering: .relaxed) }
}
