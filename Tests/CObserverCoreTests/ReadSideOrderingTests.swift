// How the core orders read sections (oc_epoch.h, oc__section_enter): with a
// store-load fence, or (Linux) without one because the reclaimer issues
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) before each scan of the epoch
// records. OBSERVER_CORE_MEMBARRIER=0 forces the fence; `make c-test` runs the
// C test program in both modes.
import CObserverCore
import CObserverCore.Testing
import Foundation
import XCTest

final class ReadSideOrderingTests: XCTestCase {
    private var fallbackForced: Bool {
        ProcessInfo.processInfo.environment["OBSERVER_CORE_MEMBARRIER"] == "0"
    }

    func testForcedFallbackKeepsTheFence() throws {
        try XCTSkipUnless(fallbackForced, "OBSERVER_CORE_MEMBARRIER=0 is not set in this run")
        XCTAssertFalse(oc_testing_sections_use_membarrier())
    }

    /// Membarriers are issued per poll or grace period: none for sends, at
    /// most one per writer poll (64 retirements) for subscribe/cancel churn,
    /// exactly one per barrier and per synchronize, and none at all when
    /// sections keep their fence.
    func testMembarrierIsPerGracePeriodNeverPerOperation() throws {
        let membarrier = oc_testing_sections_use_membarrier()
        if fallbackForced {
            XCTAssertFalse(membarrier)
        }
        let list = try XCTUnwrap(oc_list_create(coreTestRelease))
        defer {
            oc_list_destroy(list)
            XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
            _ = takeReleases()
        }
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        var handle = noHandle
        XCTAssertEqual(oc_list_add(list, fakeContext(1), &handle), OC_OK)

        var before = oc_testing_membarriers()
        var delivered = 0
        for _ in 0..<100_000 {
            let reader = oc_read_begin()
            let view = oc_list_view(list)
            for index in 0..<view.count where oc_view_context(view, index) != nil {
                delivered += 1
            }
            oc_read_end(reader)
        }
        XCTAssertEqual(delivered, 100_000)
        XCTAssertEqual(oc_testing_membarriers() - before, 0, "sends issued membarriers")

        before = oc_testing_membarriers()
        for value in 2..<6402 {
            var churned = noHandle
            XCTAssertEqual(oc_list_add(list, fakeContext(value), &churned), OC_OK)
            XCTAssertEqual(oc_list_remove(list, churned), OC_OK)
        }
        let churn = oc_testing_membarriers() - before
        XCTAssertLessThanOrEqual(churn, 6400 / 64, "more than one membarrier per writer poll")
        if membarrier {
            XCTAssertGreaterThan(churn, 0, "writers polled without a membarrier")
        } else {
            XCTAssertEqual(churn, 0)
        }

        before = oc_testing_membarriers()
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(oc_synchronize(), OC_OK)
        XCTAssertEqual(oc_testing_membarriers() - before, membarrier ? 2 : 0)
    }
}
