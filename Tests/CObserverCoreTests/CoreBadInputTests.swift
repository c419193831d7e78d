import CObserverCore
import CObserverCore.Testing
import XCTest

/// The C API given bad input: NULL lists and contexts, stale, foreign, never
/// issued and garbage handles. Each call reports a status (or a neutral
/// value) and changes nothing; nobody else's context is removed or released.
final class CoreBadInputTests: XCTestCase {
    override func setUp() {
        _ = oc_reclaim_barrier()
        _ = takeReleases()
    }

    func testNullListIsRejectedByEveryCall() {
        var handle = forgedHandle(sequence: 12345)
        XCTAssertEqual(oc_list_add(nil, fakeContext(1), &handle), OC_EINVAL)
        assertSameHandle(handle, noHandle)
        XCTAssertEqual(oc_list_remove(nil, forgedHandle(sequence: 1)), OC_EINVAL)
        XCTAssertEqual(oc_list_try_remove(nil, forgedHandle(sequence: 1)), OC_EINVAL)
        XCTAssertEqual(oc_list_remove_wait(nil, forgedHandle(sequence: 1)), OC_EINVAL)
        XCTAssertEqual(oc_list_remove_if(nil, { _, _ in true }, nil), 0)
        XCTAssertEqual(oc_list_clear(nil), 0)
        XCTAssertEqual(oc_list_count(nil), 0)
        XCTAssertEqual(oc_list_capacity(nil), 0)
        XCTAssertFalse(oc_list_contains(nil, forgedHandle(sequence: 1)))
        oc_list_destroy(nil)  // documented no-op
    }

    func testNullContextAndNullHandlePointerAreRejected() throws {
        let list = try XCTUnwrap(oc_list_create(coreTestRelease))
        defer { oc_list_destroy(list) }
        var handle = forgedHandle(sequence: 7)
        XCTAssertEqual(oc_list_add(list, nil, &handle), OC_EINVAL)
        assertSameHandle(handle, noHandle)
        XCTAssertEqual(oc_list_add(list, fakeContext(1), nil), OC_EINVAL)
        XCTAssertEqual(oc_list_count(list), 0)
        XCTAssertEqual(oc_list_remove_if(list, nil, nil), 0, "NULL predicate removes nothing")
    }

    func testStaleForeignNeverIssuedAndGarbageHandles() throws {
        let first = try XCTUnwrap(oc_list_create(coreTestRelease))
        let second = try XCTUnwrap(oc_list_create(coreTestRelease))
        var a = noHandle
        var b = noHandle
        XCTAssertEqual(oc_list_add(first, fakeContext(1), &a), OC_OK)
        XCTAssertEqual(oc_list_add(second, fakeContext(2), &b), OC_OK)
        // Same slot index in both lists; the sequence part tells them apart.
        XCTAssertEqual(oc_list_remove(second, a), OC_ENOENT, "foreign handle")
        XCTAssertEqual(oc_list_remove(first, b), OC_ENOENT, "foreign handle")
        XCTAssertEqual(oc_list_remove(first, noHandle), OC_ENOENT)
        let garbage = forgedHandle(sequence: .max, index: .max)
        let neverIssued = forgedHandle(sequence: a.sequence ^ (1 << 40), index: a.index)
        let pastTheLimit = forgedHandle(sequence: a.sequence, index: a.index + 5)
        XCTAssertEqual(oc_list_remove(first, garbage), OC_ENOENT, "garbage handle")
        XCTAssertEqual(oc_list_remove(first, neverIssued), OC_ENOENT, "never issued")
        XCTAssertEqual(oc_list_remove(first, pastTheLimit), OC_ENOENT, "index past the scan limit")
        XCTAssertEqual(oc_list_count(first), 1)
        XCTAssertEqual(oc_list_count(second), 1)

        XCTAssertEqual(oc_list_remove(first, a), OC_OK)
        XCTAssertEqual(oc_list_remove(first, a), OC_ENOENT, "double remove")
        XCTAssertEqual(oc_list_try_remove(first, a), OC_ENOENT)
        XCTAssertEqual(oc_list_remove_wait(first, a), OC_ENOENT)
        // The slot is reused: the stale handle must not match the newcomer.
        var c = noHandle
        XCTAssertEqual(oc_list_add(first, fakeContext(3), &c), OC_OK)
        XCTAssertEqual(c.index, a.index, "newcomer reuses the slot")
        XCTAssertEqual(oc_list_remove(first, a), OC_ENOENT, "stale handle on a reused slot")
        XCTAssertTrue(oc_list_contains(first, c))
        XCTAssertFalse(oc_list_contains(first, a))

        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), [1], "only the removed context is released, once")
        oc_list_destroy(first)
        oc_list_destroy(second)
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), [2, 3])
    }

    func testWaitingInsideAReadSectionReportsInsteadOfHanging() throws {
        let list = try XCTUnwrap(oc_list_create(coreTestRelease))
        var handle = noHandle
        XCTAssertEqual(oc_list_add(list, fakeContext(1), &handle), OC_OK)
        let reader = oc_read_begin()
        XCTAssertTrue(oc_in_read_section())
        XCTAssertEqual(oc_synchronize(), OC_EINSECTION)
        XCTAssertEqual(oc_reclaim_barrier(), OC_EINSECTION)
        XCTAssertEqual(oc_list_remove_wait(list, handle), OC_EINSECTION, "removed, but cannot wait")
        XCTAssertFalse(oc_list_contains(list, handle))
        oc_read_end(reader)
        XCTAssertFalse(oc_in_read_section())
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), [1])
        oc_list_destroy(list)
    }

    func testStatusStringsAreDistinct() {
        let statuses = [OC_OK, OC_ENOMEM, OC_EINVAL, OC_EFULL, OC_ENOENT, OC_EINSECTION, OC_EBUSY]
        let strings = statuses.map { String(cString: oc_status_string($0)) }
        XCTAssertEqual(Set(strings).count, statuses.count)
        XCTAssertEqual(String(cString: oc_status_string(oc_status_t(rawValue: 99))), "unknown status")
    }
}
