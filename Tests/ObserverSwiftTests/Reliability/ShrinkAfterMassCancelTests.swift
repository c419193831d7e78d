import CObserverCore
import CObserverCore.Testing
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// Issue 28's cliff: after all but one of 1 000 000 subscriptions of one
/// `Event` are cancelled, the event's slot list shrinks to what the one
/// survivor needs, by the core's own accounting (`oc_list_bytes_held`), and
/// the survivor's token still delivers and cancels.
final class ShrinkAfterMassCancelTests: XCTestCase {
    func testAllButTheLastOfAMillionSubscriptionsCancelledLeavesAtMost64KiB() throws {
        let subscriptions = 1_000_000
        let event = Event<Int>()
        let received = Received<Int>()
        var tokens: [Subscription] = []
        tokens.reserveCapacity(subscriptions)
        for _ in 1..<subscriptions { tokens.append(event.subscribe { _ in }) }
        let survivor = event.subscribe { received.append($0) }
        let list = try XCTUnwrap(event.observers.existingList)
        XCTAssertGreaterThan(oc_list_bytes_held(list), 16 * subscriptions, "a slot per subscription")

        for token in tokens { token.cancel() }
        tokens = []
        XCTAssertEqual(event.subscribersCount, 1)
        let held = oc_list_bytes_held(list)
        XCTAssertLessThanOrEqual(held, 64 * 1024, "bytes the list holds for one survivor")
        XCTAssertLessThanOrEqual(oc_list_capacity(list), 2)

        event.send(7)
        XCTAssertEqual(received.values, [7], "the survivor, moved to the first slot, still receives")
        XCTAssertTrue(survivor.isActive)
        XCTAssertTrue(survivor.cancel(), "its token still names its slot")
        event.send(8)
        XCTAssertEqual(received.values, [7])
        XCTAssertEqual(event.subscribersCount, 0)
        try ObserverCore.reclaimNow()
    }
}
