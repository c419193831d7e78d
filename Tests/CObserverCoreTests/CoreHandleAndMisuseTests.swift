import CObserverCore
import CObserverCore.Testing
import XCTest

/// Handles that never repeat (a 64-bit sequence, fast-forwarded here past
/// the values where a 40-bit one wrapped), and misuse of read sections that
/// is ignored and counted instead of poisoning the thread. The exhaustion of
/// the 64-bit counter and fork() are tested in Tests/c/oc_core_test.c
/// (`make c-test`), in child processes.
final class CoreHandleAndMisuseTests: XCTestCase {
    override func setUp() {
        _ = oc_reclaim_barrier()
        _ = takeReleases()
    }

    func testAStaleHandleNeverMatchesTheSameSlot2To40AddsLater() throws {
        let list = try XCTUnwrap(oc_list_create(coreTestRelease))
        defer { oc_list_destroy(list) }
        var first = noHandle
        XCTAssertEqual(oc_list_add(list, fakeContext(1), &first), OC_OK)
        XCTAssertEqual(oc_list_remove(list, first), OC_OK)
        let target = first.sequence + (1 << 40)
        XCTAssertEqual(oc_testing_advance_sequence(target), target)
        var second = noHandle
        XCTAssertEqual(oc_list_add(list, fakeContext(2), &second), OC_OK)
        XCTAssertEqual(second.index, first.index, "the same slot")
        assertDifferentHandles(second, first, "a different handle")
        XCTAssertEqual(oc_list_remove(list, first), OC_ENOENT, "the stale handle removes nothing")
        XCTAssertTrue(oc_list_contains(list, second))
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), [1])
    }

    func testNoAddIssuesTheNoneHandleAtSequenceBoundaries() throws {
        let list = try XCTUnwrap(oc_list_create(coreTestRelease))
        defer { oc_list_destroy(list) }
        for shift: UInt64 in [32, 40, 48] {
            let next = oc_testing_advance_sequence(0)
            let multiple = ((next >> shift) + 1) << shift
            XCTAssertEqual(oc_testing_advance_sequence(multiple), multiple)
            var handle = forgedHandle(sequence: 5, index: 5)
            XCTAssertEqual(oc_list_add(list, fakeContext(Int(shift)), &handle), OC_OK)
            XCTAssertEqual(handle.index, 0)
            XCTAssertEqual(handle.sequence, multiple, "low bits all zero")
            XCTAssertFalse(oc_handle_is_none(handle))
            XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
        }
        let next = oc_testing_advance_sequence(0)
        XCTAssertEqual(oc_testing_advance_sequence(1), next, "the counter never moves back")
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), [32, 40, 48])
    }

    func testAnUnbalancedReadEndIsIgnoredAndCounted() {
        oc_testing_set_checks_fatal(false)  // debug builds would abort: count instead
        defer { oc_testing_set_checks_fatal(true) }
        let unbalanced = oc_stats().unbalanced_read_ends
        oc_read_end(oc_reader_current())
        XCTAssertFalse(oc_in_read_section())
        XCTAssertEqual(oc_synchronize(), OC_OK, "the thread is not left in a section")
        let reader = oc_read_begin()
        oc_read_end(reader)
        oc_read_end(reader)
        XCTAssertFalse(oc_in_read_section())
        XCTAssertEqual(oc_synchronize(), OC_OK)
        XCTAssertEqual(oc_stats().unbalanced_read_ends, unbalanced + 2)
    }

    func testDebugBuildsCheckThatAViewIsTakenInsideASection() throws {
        #if DEBUG
            let list = try XCTUnwrap(oc_list_create(nil))
            defer { oc_list_destroy(list) }
            oc_testing_set_checks_fatal(false)
            defer { oc_testing_set_checks_fatal(true) }
            let failures = oc_testing_check_failures()
            _ = oc_list_view(list)
            XCTAssertEqual(oc_testing_check_failures(), failures + 1)
            let reader = oc_read_begin()
            _ = oc_list_view(list)
            oc_read_end(reader)
            XCTAssertEqual(oc_testing_check_failures(), failures + 1, "inside a section: no report")
        #else
            throw XCTSkip("debug-build check")
        #endif
    }
}
