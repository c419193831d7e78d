import CObserverCore
import CObserverCore.Testing
import XCTest

/// The C API called directly, as a C program would.
final class ListAPITests: XCTestCase {
    /// Contexts released by the core, recorded by `recordRelease`.
    nonisolated(unsafe) static var released: [Int] = []

    private func makeList() -> OpaquePointer {
        // Releases retired by earlier tests arrive with the next poll: drain them first.
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        Self.released = []
        return oc_list_create { context in
            ListAPITests.released.append(Int(bitPattern: context))
        }!
    }

    private func context(_ value: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: value)!
    }

    private func visibleContexts(_ list: OpaquePointer) -> [Int] {
        let reader = oc_read_begin()
        defer { oc_read_end(reader) }
        let view = oc_list_view(list)
        return (0..<view.count).compactMap { index in
            oc_view_context(view, index).map { Int(bitPattern: $0) }
        }
    }

    func testAddRemoveAndHandles() throws {
        let list = makeList()
        defer { oc_list_destroy(list) }
        var first = noHandle
        var second = noHandle
        XCTAssertEqual(oc_list_add(list, context(0x10), &first), OC_OK)
        XCTAssertEqual(oc_list_add(list, context(0x20), &second), OC_OK)
        assertDifferentHandles(first, noHandle)
        XCTAssertEqual(oc_list_count(list), 2)
        XCTAssertTrue(oc_list_contains(list, first))
        XCTAssertEqual(visibleContexts(list), [0x10, 0x20])

        XCTAssertEqual(oc_list_remove(list, first), OC_OK)
        XCTAssertEqual(oc_list_remove(list, first), OC_ENOENT, "a stale handle is reported, nothing removed")
        XCTAssertEqual(oc_list_remove(list, noHandle), OC_ENOENT)
        XCTAssertEqual(oc_list_remove(list, forgedHandle(sequence: 0xdead_beef)), OC_ENOENT, "a handle never issued")
        XCTAssertEqual(visibleContexts(list), [0x20])

        // The freed slot is reused, but the stale handle still names nothing.
        var third = noHandle
        XCTAssertEqual(oc_list_add(list, context(0x30), &third), OC_OK)
        XCTAssertEqual(third.index, first.index)
        XCTAssertNotEqual(third.sequence, first.sequence)
        XCTAssertEqual(oc_list_remove(list, first), OC_ENOENT)
        XCTAssertTrue(oc_list_contains(list, third))

        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(Self.released, [0x10], "released once, after a grace period")
    }

    func testForeignHandleNeverRemovesSomeoneElse() {
        let list = makeList()
        let other = oc_list_create(nil)!
        defer {
            oc_list_destroy(list)
            oc_list_destroy(other)
        }
        var mine = noHandle
        var theirs = noHandle
        XCTAssertEqual(oc_list_add(list, context(0x10), &mine), OC_OK)
        XCTAssertEqual(oc_list_add(other, context(0x20), &theirs), OC_OK)
        XCTAssertEqual(oc_list_remove(list, theirs), OC_ENOENT)
        XCTAssertEqual(oc_list_remove(other, mine), OC_ENOENT)
        XCTAssertEqual(oc_list_count(list), 1)
        XCTAssertEqual(oc_list_count(other), 1)
    }

    func testNullArgumentsAreReportedNotFatal() {
        var handle = forgedHandle(sequence: 1)
        XCTAssertEqual(oc_list_add(nil, context(1), &handle), OC_EINVAL)
        assertSameHandle(handle, noHandle)
        let list = makeList()
        defer { oc_list_destroy(list) }
        XCTAssertEqual(oc_list_add(list, nil, &handle), OC_EINVAL)
        XCTAssertEqual(oc_list_add(list, context(1), nil), OC_EINVAL)
        XCTAssertEqual(oc_list_remove(nil, forgedHandle(sequence: 1)), OC_EINVAL)
        XCTAssertEqual(oc_list_try_remove(nil, forgedHandle(sequence: 1)), OC_EINVAL)
        XCTAssertEqual(oc_list_clear(nil), 0)
        XCTAssertEqual(oc_list_count(nil), 0)
        XCTAssertFalse(oc_list_contains(nil, forgedHandle(sequence: 1)))
        oc_list_destroy(nil)
        XCTAssertEqual(String(cString: oc_status_string(OC_ENOENT)), "stale, foreign or unknown handle")
    }

    func testGrowthAndShrinkKeepEveryContextVisible() throws {
        let list = makeList()
        defer { oc_list_destroy(list) }
        var handles: [oc_handle_t] = []
        for value in 1...1000 {
            var handle = noHandle
            XCTAssertEqual(oc_list_add(list, context(value), &handle), OC_OK)
            handles.append(handle)
        }
        XCTAssertEqual(visibleContexts(list), Array(1...1000))
        XCTAssertGreaterThanOrEqual(oc_list_capacity(list), 1000)
        for handle in handles.dropFirst(10) {
            XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
        }
        XCTAssertEqual(visibleContexts(list), Array(1...10))
        XCTAssertLessThanOrEqual(oc_list_capacity(list), 64, "the array shrinks after mass removal")
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(Self.released.sorted(), Array(11...1000))
    }

    func testAViewDoesNotSeeAddsMadeAfterIt() {
        let list = makeList()
        defer { oc_list_destroy(list) }
        var handle = noHandle
        XCTAssertEqual(oc_list_add(list, context(1), &handle), OC_OK)
        var second = noHandle
        XCTAssertEqual(oc_list_add(list, context(2), &second), OC_OK)
        let reader = oc_read_begin()
        let view = oc_list_view(list)
        // Free slot 0 and refill it after the view was taken.
        XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
        var late = noHandle
        XCTAssertEqual(oc_list_add(list, context(3), &late), OC_OK)
        var seen: [Int] = []
        for index in 0..<view.count {
            if let found = oc_view_context(view, index) { seen.append(Int(bitPattern: found)) }
        }
        oc_read_end(reader)
        XCTAssertEqual(seen, [2], "the removed context is gone and the newer add is filtered out")
        XCTAssertEqual(visibleContexts(list), [3, 2])
    }

    func testWaitingInsideAReadSectionIsReportedNotHung() {
        let list = makeList()
        defer { oc_list_destroy(list) }
        var handle = noHandle
        XCTAssertEqual(oc_list_add(list, context(1), &handle), OC_OK)
        let reader = oc_read_begin()
        XCTAssertTrue(oc_in_read_section())
        XCTAssertEqual(oc_synchronize(), OC_EINSECTION)
        XCTAssertEqual(oc_reclaim_barrier(), OC_EINSECTION)
        XCTAssertEqual(oc_list_remove_wait(list, handle), OC_EINSECTION, "removed, but could not wait")
        XCTAssertFalse(oc_list_contains(list, handle))
        oc_read_end(reader)
        XCTAssertFalse(oc_in_read_section())
        XCTAssertEqual(oc_synchronize(), OC_OK)
    }

    func testNestedSections() {
        let outer = oc_read_begin()
        let inner = oc_read_begin()
        oc_read_end(inner)
        XCTAssertTrue(oc_in_read_section(), "the outer section is still open")
        oc_read_end(outer)
        XCTAssertFalse(oc_in_read_section())
    }

    func testRemoveIfAndClear() {
        let list = makeList()
        defer { oc_list_destroy(list) }
        for value in 1...600 {
            var handle = noHandle
            XCTAssertEqual(oc_list_add(list, context(value), &handle), OC_OK)
        }
        let removed = oc_list_remove_if(list, { context, _ in Int(bitPattern: context) % 2 == 0 }, nil)
        XCTAssertEqual(removed, 300)
        XCTAssertEqual(visibleContexts(list), Array(stride(from: 1, through: 599, by: 2)))
        XCTAssertEqual(oc_list_clear(list), 300)
        XCTAssertEqual(oc_list_count(list), 0)
        XCTAssertTrue(oc_list_is_empty(list))
    }

    func testAllocationFailureOnGrowthIsReportedAndChangesNothing() {
        let list = makeList()
        defer { oc_list_destroy(list) }
        for value in 1...16 {
            var handle = noHandle
            XCTAssertEqual(oc_list_add(list, context(value), &handle), OC_OK)
        }
        oc_debug_fail_allocations(1)
        var handle = forgedHandle(sequence: 7)
        XCTAssertEqual(oc_list_add(list, context(17), &handle), OC_ENOMEM)
        assertSameHandle(handle, noHandle)
        XCTAssertEqual(oc_list_count(list), 16)
        XCTAssertEqual(visibleContexts(list), Array(1...16))
        XCTAssertEqual(oc_list_add(list, context(17), &handle), OC_OK, "works again once memory is back")
        oc_debug_fail_allocations(0)
    }

    func testStatisticsReturnToZeroPendingAfterABarrier() {
        let list = makeList()
        var handle = noHandle
        XCTAssertEqual(oc_list_add(list, context(1), &handle), OC_OK)
        XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
        oc_list_destroy(list)
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        let stats = oc_stats()
        XCTAssertEqual(stats.pending_objects, 0)
        XCTAssertEqual(stats.pending_bytes, 0)
        XCTAssertGreaterThan(stats.reclaimed_objects, 0)
    }
}
