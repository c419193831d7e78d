import CObserverCore
import CObserverCore.Testing
import XCTest

/// Simulated allocation failures (`oc_debug_fail_allocations`): every failure
/// is reported (`NULL`, `OC_ENOMEM`) with nothing changed and nothing lost, or
/// falls back to a slower path that still releases exactly once.
final class CoreAllocationFailureTests: XCTestCase {
    override func setUp() {
        _ = oc_reclaim_barrier()
        _ = takeReleases()
    }

    override func tearDown() {
        oc_debug_fail_allocations(0)
    }

    func testCreateFailureReturnsNull() {
        for failures: UInt32 in [1, 2, 3] {
            oc_debug_fail_allocations(failures)
            XCTAssertNil(oc_list_create(coreTestRelease), "failing \(failures) allocation(s)")
            oc_debug_fail_allocations(0)
        }
        let list = oc_list_create(coreTestRelease)
        XCTAssertNotNil(list)
        oc_list_destroy(list)
    }

    func testGrowthFailureIsReportedAsENOMEMWithNothingLost() throws {
        let list = try XCTUnwrap(oc_list_create(coreTestRelease))
        var handles: [oc_handle_t] = []
        let capacity = oc_list_capacity(list)
        for index in 1...capacity {
            var handle = noHandle
            XCTAssertEqual(oc_list_add(list, fakeContext(Int(index)), &handle), OC_OK)
            handles.append(handle)
        }
        // The next add must grow the slot array; make that allocation fail.
        for failures: UInt32 in [1, 2] {
            oc_debug_fail_allocations(failures)
            var handle = forgedHandle(sequence: 99)
            XCTAssertEqual(oc_list_add(list, fakeContext(1000), &handle), OC_ENOMEM)
            assertSameHandle(handle, noHandle)
            oc_debug_fail_allocations(0)
            XCTAssertEqual(oc_list_count(list), capacity, "nothing added, nothing lost")
            XCTAssertEqual(oc_list_capacity(list), capacity)
        }
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), [], "a failed add releases nothing (the caller still owns it)")
        for handle in handles { XCTAssertTrue(oc_list_contains(list, handle)) }
        // Without failures the same add succeeds and every context is intact.
        var handle = noHandle
        XCTAssertEqual(oc_list_add(list, fakeContext(1000), &handle), OC_OK)
        XCTAssertEqual(oc_list_count(list), capacity + 1)
        XCTAssertEqual(oc_list_clear(list), capacity + 1)
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), Array(1...Int(capacity)) + [1000])
        oc_list_destroy(list)
    }

    func testShrinkFailureKeepsTheLargerArray() throws {
        let list = try XCTUnwrap(oc_list_create(coreTestRelease))
        var handles: [oc_handle_t] = []
        for index in 1...64 {
            var handle = noHandle
            XCTAssertEqual(oc_list_add(list, fakeContext(index), &handle), OC_OK)
            handles.append(handle)
        }
        let grown = oc_list_capacity(list)
        let leakedBefore = oc_stats().leaked_contexts
        // Removing from the top lets the array shrink; shrink allocations fail.
        oc_debug_fail_allocations(1_000)
        for handle in handles.reversed().prefix(60) {
            // The retirement record cannot be allocated either: outside a
            // read section the core waits for a grace period and releases
            // at once instead.
            XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
        }
        oc_debug_fail_allocations(0)
        XCTAssertEqual(oc_list_capacity(list), grown, "shrinking needs memory; without it the list stays larger")
        XCTAssertEqual(oc_list_count(list), 4)
        XCTAssertEqual(takeReleases(), Array(5...64), "released synchronously, exactly once")
        XCTAssertEqual(oc_stats().leaked_contexts, leakedBefore, "nothing leaked outside a read section")
        oc_list_destroy(list)
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), [1, 2, 3, 4])
    }

    func testRetirementFailureInsideAReadSectionIsCountedAsLeaked() throws {
        let list = try XCTUnwrap(oc_list_create(coreTestRelease))
        var handle = noHandle
        XCTAssertEqual(oc_list_add(list, fakeContext(1), &handle), OC_OK)
        let leakedBefore = oc_stats().leaked_contexts
        let reader = oc_read_begin()
        oc_debug_fail_allocations(1)
        // Documented: the removal happens, but the context can be neither
        // retired (no memory) nor released (a reader may see it): it is
        // leaked on purpose and counted, never freed early.
        XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
        oc_debug_fail_allocations(0)
        oc_read_end(reader)
        XCTAssertEqual(oc_stats().leaked_contexts, leakedBefore + 1)
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), [])
        oc_list_destroy(list)
    }
}
