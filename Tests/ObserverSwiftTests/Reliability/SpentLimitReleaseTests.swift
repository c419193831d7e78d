import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// A `limit:` subscription spent by a send that met its list's writer lock
/// busy stays stored for a moment (a send never blocks). Its captures must
/// still be released within one later operation of any kind on that list,
/// or by a reclaim, and `cancel()` on its token must report that it had
/// expired already (false).
final class SpentLimitReleaseTests: XCTestCase {
    private final class Capture: Sendable {}

    /// An `Event` holding one `limit: 1` subscription, spent by a send made
    /// while the list's writer lock is held (inside a removal's predicate),
    /// so its send-path removal met a busy lock. Returns the token and a
    /// weak reference to the handler's capture.
    private func spentWhileTheWriterLockWasBusy(
        _ event: Event<Int>
    ) -> (token: Subscription, capture: () -> AnyObject?) {
        var capture: Capture? = Capture()
        weak let weakCapture = capture
        let token = event.subscribe(limit: 1) { [capture] _ in withExtendedLifetime(capture) {} }
        capture = nil
        event.slots.removeAll { _ in
            event.send(1)  // spends the limit under the busy lock
            return false
        }
        XCTAssertEqual(event.slots.storedCount, 1, "setup: the removal must have met the busy lock")
        return (token, { weakCapture })
    }

    func testCancelOnTheSpentTokenReturnsFalse() throws {
        let event = Event<Int>()
        let (token, capture) = spentWhileTheWriterLockWasBusy(event)
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel(), "a spent limit: subscription reports false, as documented")
        try ObserverCore.reclaimNow()
        XCTAssertNil(capture())
    }

    func testALaterSendReleasesIt() throws {
        let event = Event<Int>()
        let (_, capture) = spentWhileTheWriterLockWasBusy(event)
        event.send(2)
        XCTAssertEqual(event.slots.storedCount, 0)
        try ObserverCore.reclaimNow()
        XCTAssertNil(capture())
    }

    func testACountReleasesIt() throws {
        let event = Event<Int>()
        let (_, capture) = spentWhileTheWriterLockWasBusy(event)
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertEqual(event.slots.storedCount, 0)
        try ObserverCore.reclaimNow()
        XCTAssertNil(capture())
    }

    func testAnUnsubscribeReleasesIt() throws {
        let event = Event<Int>()
        let (_, capture) = spentWhileTheWriterLockWasBusy(event)
        XCTAssertEqual(event.unsubscribe(Capture()), 0)
        XCTAssertEqual(event.slots.storedCount, 0)
        try ObserverCore.reclaimNow()
        XCTAssertNil(capture())
    }

    func testAReclaimAloneReleasesIt() throws {
        let event = Event<Int>()
        let (_, capture) = spentWhileTheWriterLockWasBusy(event)
        try ObserverCore.reclaimNow()
        XCTAssertNil(capture(), "reclaimNow must release a spent subscription no later call removed")
        XCTAssertEqual(event.slots.storedCount, 0)
    }

    func testAKeyedSpentSubscriptionIsReleasedByALaterSendOrAReclaim() throws {
        for releasedByASend in [true, false] {
            let event = KeyedEvent<String, Int>()
            var capture: Capture? = Capture()
            weak let weakCapture = capture
            let token = event.subscribe(key: "k", limit: 1) { [capture] _ in withExtendedLifetime(capture) {} }
            capture = nil
            event.lists.removeAll(forKey: "k") { _ in
                event.send(1, forKey: "k")
                return false
            }
            XCTAssertEqual(event.lists.storedCount(forKey: "k"), 1, "setup: the removal must have met the busy lock")
            XCTAssertFalse(token.isActive)
            if releasedByASend {
                event.send(2, forKey: "k")
                XCTAssertEqual(event.lists.storedCount(forKey: "k"), 0)
            }
            try ObserverCore.reclaimNow()
            XCTAssertNil(weakCapture)
            XCTAssertEqual(event.keyCount, 0)
            XCTAssertFalse(token.cancel())
        }
    }
}
