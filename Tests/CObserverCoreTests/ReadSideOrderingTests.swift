// How the core orders read sections (oc_epoch.h, oc__section_enter): with a
// store-load fence, or (Linux) without one because the reclaimer issues
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) before each scan of the epoch
// records, and how often polls scan (the scan policy, OC_SCAN_* in
// oc_epoch.h). OBSERVER_CORE_MEMBARRIER=0 forces the fence; `make c-test`
// runs the C test program in both modes.
import CObserverCore
import CObserverCore.Testing
import Foundation
import Synchronization
import XCTest

final class ReadSideOrderingTests: XCTestCase {
    private var fallbackForced: Bool {
        ProcessInfo.processInfo.environment["OBSERVER_CORE_MEMBARRIER"] == "0"
    }

    private static let defaultPolicy = oc_scan_policy_t(
        interval_ns: UInt64(OC_SCAN_INTERVAL_NS), retired_objects: UInt64(OC_SCAN_RETIRED_OBJECTS),
        retired_objects_alone: UInt64(OC_SCAN_RETIRED_OBJECTS_ALONE), retired_bytes: UInt64(OC_SCAN_RETIRED_BYTES))
    private static let never = UInt64.max

    private func setPolicy(
        interval: UInt64 = never, objects: UInt64 = never, objectsAlone: UInt64 = never, bytes: UInt64 = never
    ) {
        _ = oc_testing_set_scan_policy(
            oc_scan_policy_t(
                interval_ns: interval, retired_objects: objects, retired_objects_alone: objectsAlone,
                retired_bytes: bytes))
    }

    /// A thread inside read sections (one after the other, as a sender's)
    /// until `body` returns.
    private func whileAnotherThreadReads<T>(_ list: OpaquePointer, _ body: () throws -> T) rethrows -> T {
        let stop = StopRequest()
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let shared = list
        Thread.detachNewThread {
            started.signal()
            while !stop.requested.load(ordering: .relaxed) {
                let reader = oc_read_begin()
                let view = oc_list_view(shared)
                for index in 0..<view.count { _ = oc_view_context(view, index) }
                oc_read_end(reader)
                readerSections.add(1, ordering: .relaxed)
            }
            finished.signal()
        }
        started.wait()
        defer {
            stop.requested.store(true, ordering: .relaxed)
            finished.wait()
        }
        return try body()
    }

    /// Objects retired so far in the process (pending or released).
    private func retiredObjects() -> UInt64 {
        let stats = oc_stats()
        return stats.reclaimed_objects + stats.pending_objects
    }

    private func monotonicNanoseconds() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// What one churn run saw: membarriers, objects retired, time taken, and
    /// the most objects and bytes pending after any pair.
    private struct Churn {
        var membarriers: UInt64 = 0
        var retired: UInt64 = 0
        var nanoseconds: UInt64 = 0
        var maxPendingObjects: UInt64 = 0
        var maxPendingBytes: UInt64 = 0
    }

    /// `pairs` add/remove pairs on `list` (one retired context each), from a
    /// barrier's clean state.
    private func churn(_ list: OpaquePointer, pairs: Int, firstValue: Int) -> Churn {
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        var result = Churn()
        let membarriersBefore = oc_testing_membarriers()
        let retiredBefore = retiredObjects()
        let start = monotonicNanoseconds()
        for value in firstValue..<(firstValue + pairs) {
            var churned = noHandle
            XCTAssertEqual(oc_list_add(list, fakeContext(value), &churned), OC_OK)
            XCTAssertEqual(oc_list_remove(list, churned), OC_OK)
            let stats = oc_stats()
            result.maxPendingObjects = max(result.maxPendingObjects, stats.pending_objects)
            result.maxPendingBytes = max(result.maxPendingBytes, stats.pending_bytes)
        }
        result.nanoseconds = monotonicNanoseconds() - start
        result.membarriers = oc_testing_membarriers() - membarriersBefore
        result.retired = retiredObjects() - retiredBefore
        return result
    }

    /// Core bytes one removed context holds while pending (its retirement
    /// record): one pair on `list` (which does not resize for it) from a
    /// barrier's clean state, below the writers' poll threshold.
    private func bytesPerRetiredContext(_ list: OpaquePointer) -> UInt64 {
        let run = churn(list, pairs: 1, firstValue: 500_000)
        let stats = oc_stats()
        XCTAssertEqual(stats.pending_objects, 1, "the list resized")
        XCTAssertEqual(run.membarriers, 0)
        return stats.pending_bytes
    }

    private func withList(_ body: (OpaquePointer) throws -> Void) throws {
        let list = try XCTUnwrap(oc_list_create(coreTestRelease))
        defer {
            _ = oc_testing_set_scan_policy(Self.defaultPolicy)
            oc_list_destroy(list)
            XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
            _ = takeReleases()
        }
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        // A stable context, and the array grown once: the churned contexts
        // come and go in slot 1 without a resize.
        var stable = noHandle
        XCTAssertEqual(oc_list_add(list, fakeContext(1), &stable), OC_OK)
        var warmUp = noHandle
        XCTAssertEqual(oc_list_add(list, fakeContext(2), &warmUp), OC_OK)
        XCTAssertEqual(oc_list_remove(list, warmUp), OC_OK)
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        try body(list)
    }

    func testForcedFallbackKeepsTheFence() throws {
        try XCTSkipUnless(fallbackForced, "OBSERVER_CORE_MEMBARRIER=0 is not set in this run")
        XCTAssertFalse(oc_testing_sections_use_membarrier())
    }

    /// Sends never issue a membarrier while nothing is pending, and at most
    /// one per scan interval while a quiet writer left retirements behind;
    /// a barrier and a synchronize issue exactly one each; none at all when
    /// sections keep their fence.
    func testSendsBarriersAndSynchronize() throws {
        let membarrier = oc_testing_sections_use_membarrier()
        if fallbackForced {
            XCTAssertFalse(membarrier)
        }
        try withList { list in
            var before = oc_testing_membarriers()
            var delivered = 0
            func send(_ count: Int) {
                for _ in 0..<count {
                    let reader = oc_read_begin()
                    let view = oc_list_view(list)
                    for index in 0..<view.count where oc_view_context(view, index) != nil {
                        delivered += 1
                    }
                    oc_read_end(reader)
                }
            }
            send(100_000)
            XCTAssertEqual(delivered, 100_000)
            XCTAssertEqual(oc_testing_membarriers() - before, 0, "sends issued membarriers")

            // Retirements a writer left behind: senders poll them (writers are
            // quiet), scanning at most once per interval.
            var handle = noHandle
            XCTAssertEqual(oc_list_add(list, fakeContext(2), &handle), OC_OK)
            XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
            before = oc_testing_membarriers()
            let start = monotonicNanoseconds()
            send(200_000)
            let elapsed = monotonicNanoseconds() - start
            let sendMembarriers = oc_testing_membarriers() - before
            XCTAssertLessThanOrEqual(
                sendMembarriers, elapsed / UInt64(OC_SCAN_INTERVAL_NS) + 1,
                "senders scanned more than once per interval")
            if !membarrier { XCTAssertEqual(sendMembarriers, 0) }

            before = oc_testing_membarriers()
            XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
            XCTAssertEqual(oc_testing_membarriers() - before, membarrier ? 1 : 0, "a barrier")
            before = oc_testing_membarriers()
            XCTAssertEqual(oc_synchronize(), OC_OK)
            XCTAssertEqual(oc_testing_membarriers() - before, membarrier ? 1 : 0, "a synchronize")
        }
    }

    /// Subscribe/cancel churn under the default policy: at most one
    /// membarrier per interval plus one per object limit's worth of
    /// retirements (OC_SCAN_RETIRED_OBJECTS while another thread reads,
    /// OC_SCAN_RETIRED_OBJECTS_ALONE otherwise) or OC_SCAN_RETIRED_BYTES
    /// bytes (never one per writer poll, as 64 000 retirements would give
    /// 1000), and what stays pending under two windows of the limits.
    func testChurnScansPerIntervalOrPerBoundOfRetirements() throws {
        let membarrier = oc_testing_sections_use_membarrier()
        try withList { list in
            let bytesEach = bytesPerRetiredContext(list)
            XCTAssertGreaterThan(bytesEach, 0)
            let pollThreshold = UInt64(OC_WRITER_POLL_THRESHOLD)
            let pendingObjectsBound = 2 * (UInt64(OC_SCAN_RETIRED_OBJECTS) + pollThreshold)
            let pendingBytesBound = 2 * UInt64(OC_SCAN_RETIRED_BYTES) + bytesEach
            for reading in [false, true] {
                func measure() -> Churn {
                    reading
                        ? whileAnotherThreadReads(list) { churn(list, pairs: 64_000, firstValue: 10) }
                        : churn(list, pairs: 64_000, firstValue: 10)
                }
                var run = measure()
                // The pending bound holds while the reading thread's sections
                // end. On a loaded machine that thread can be descheduled inside
                // one for a time slice, and no grace period ends until it runs:
                // up to two more runs, and the last one is checked.
                var attempts = 1
                while reading, attempts < 3,
                    run.maxPendingObjects >= pendingObjectsBound || run.maxPendingBytes >= pendingBytesBound
                {
                    print(
                        "read-side ordering: \(run.maxPendingObjects) objects pending with another thread reading "
                            + "(bound \(pendingObjectsBound)); measuring again")
                    run = measure()
                    attempts += 1
                }
                XCTAssertEqual(run.retired, 64_000)
                let interval = UInt64(OC_SCAN_INTERVAL_NS)
                // Which object limit applies depends on whether a poll saw the
                // other thread inside a section (a heuristic): the smaller one
                // bounds the count either way.
                let objects = UInt64(OC_SCAN_RETIRED_OBJECTS_ALONE)
                let bytes = UInt64(OC_SCAN_RETIRED_BYTES)
                let allowed =
                    run.nanoseconds / interval + 1 + run.retired / objects + 1 + run.retired * bytesEach / bytes + 1
                print(
                    "read-side ordering (\(reading ? "another thread reads" : "alone")): \(run.retired) retired in "
                        + "\(run.nanoseconds / 1000) us, \(run.membarriers) membarriers (allowed \(allowed)), "
                        + "pending at most \(run.maxPendingObjects) objects, \(run.maxPendingBytes) bytes")
                if membarrier {
                    XCTAssertLessThanOrEqual(run.membarriers, allowed, "more membarriers than the scan policy allows")
                    if !reading {
                        XCTAssertGreaterThanOrEqual(
                            run.membarriers, run.retired / (objects + UInt64(OC_WRITER_POLL_THRESHOLD)) - 1,
                            "writers retired more than the object limit between two scans")
                    }
                } else {
                    XCTAssertEqual(run.membarriers, 0)
                }
                // While the other thread's sections end: two windows at most.
                XCTAssertLessThan(run.maxPendingObjects, pendingObjectsBound, "pending objects over the bound")
                XCTAssertLessThan(run.maxPendingBytes, pendingBytesBound, "pending bytes over the bound")
            }
        }
    }

    /// Each trigger of the scan policy alone (the others set to never), by
    /// exact counts: the object limit gives one membarrier per limit's worth
    /// of retirements (polls come every 64), the byte limit one per limit's
    /// worth of bytes, the interval at most one per interval; with every
    /// limit at never, polls issue none and a barrier still releases all.
    func testEachScanTriggerAlone() throws {
        try XCTSkipUnless(oc_testing_sections_use_membarrier(), "sections keep their fence: every poll scans")
        let pollThreshold = UInt64(OC_WRITER_POLL_THRESHOLD)
        try withList { list in
            let bytesEach = bytesPerRetiredContext(list)

            // No other thread reads: the "alone" object limit applies.
            setPolicy(objectsAlone: 256)
            var run = churn(list, pairs: 6400, firstValue: 10)
            XCTAssertEqual(run.retired, 6400)
            XCTAssertLessThanOrEqual(run.membarriers, 6400 / 256 + 1, "object limit alone")
            XCTAssertGreaterThanOrEqual(run.membarriers, 6400 / (256 + pollThreshold) - 1, "object limit alone")
            XCTAssertLessThan(run.maxPendingObjects, 2 * (256 + pollThreshold), "object limit alone: pending")
            setPolicy(objects: 256)
            run = churn(list, pairs: 6400, firstValue: 10)
            XCTAssertEqual(run.membarriers, 0, "the limit for a reading thread applied with none reading")

            // Another thread reads (and is seen in a section by some poll of
            // each window): the other object limit applies.
            setPolicy(objects: 256)
            let sectionsBefore = readerSections.load(ordering: .relaxed)
            run = whileAnotherThreadReads(list) { churn(list, pairs: 6400, firstValue: 10) }
            XCTAssertLessThanOrEqual(run.membarriers, 6400 / 256 + 1, "object limit while another thread reads")
            if readerSections.load(ordering: .relaxed) - sectionsBefore > 100_000 {
                XCTAssertGreaterThan(run.membarriers, 0, "object limit while another thread reads")
            }

            let byteLimit = 8 * pollThreshold * bytesEach
            setPolicy(bytes: byteLimit)
            run = churn(list, pairs: 6400, firstValue: 10_000)
            let retiredBytes = run.retired * bytesEach
            XCTAssertLessThanOrEqual(run.membarriers, retiredBytes / byteLimit + 1, "byte limit")
            XCTAssertGreaterThanOrEqual(
                run.membarriers, retiredBytes / (byteLimit + pollThreshold * bytesEach) - 1, "byte limit")
            XCTAssertLessThan(run.maxPendingBytes, 2 * (byteLimit + pollThreshold * bytesEach), "byte limit: pending")

            let interval: UInt64 = 1_000_000
            setPolicy(interval: interval)
            run = churn(list, pairs: 64_000, firstValue: 20_000)
            XCTAssertLessThanOrEqual(run.membarriers, run.nanoseconds / interval + 1, "interval")
            XCTAssertGreaterThan(run.membarriers, 0, "interval: \(run.nanoseconds) ns of churn and no scan")

            setPolicy()
            run = churn(list, pairs: 6400, firstValue: 100_000)
            XCTAssertEqual(run.membarriers, 0, "polls scanned with every trigger off")
            XCTAssertEqual(oc_stats().pending_objects, 6400, "released without a scan")
            XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
            XCTAssertEqual(oc_stats().pending_objects, 0)
        }
    }
}

/// Sections the reading thread of `whileAnotherThreadReads` has run.
private let readerSections = Atomic<Int>(0)

/// A stop flag another thread polls.
private final class StopRequest: Sendable {
    let requested = Atomic<Bool>(false)
}
