import Dispatch
import Foundation
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// `addObserver` returns a `Subscription` token for its registration, as
/// every other kind's subscribe does: cancel, cancelAndWait, bags.
final class RegistryTokenTests: XCTestCase {
    func testCancellingTheTokenUnregistersTheObserver() {
        let registry = ObserverRegistry()
        let observer = AlphaOnly("a")
        let token = registry.addObserver(observer)
        XCTAssertTrue(token.isActive)
        registry.withObserversHere { (o: AlphaObserver) in o.alpha(1) }
        XCTAssertTrue(token.cancel())
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel(), "only once")
        XCTAssertFalse(registry.contains(observer))
        registry.withObserversHere { (o: AlphaObserver) in o.alpha(2) }
        XCTAssertEqual(observer.recorded, ["alpha 1"])
    }

    func testCancellingBeforeTheFirstNotificationUnregistersAPendingObserver() {
        let registry = ObserverRegistry()
        let observer = AlphaOnly("a")
        let token = registry.addObserver(observer)
        XCTAssertTrue(token.cancel())
        registry.withObserversHere { (o: AlphaObserver) in o.alpha(1) }
        XCTAssertEqual(observer.recorded, [])
        XCTAssertEqual(registry.observerCount, 0)
    }

    func testADuplicateAddReturnsAnInactiveTokenThatCancelsNothing() {
        let registry = ObserverRegistry()
        let observer = AlphaOnly("a")
        let first = registry.addObserver(observer)
        let second = registry.addObserver(observer, delivery: .queue(.main))
        XCTAssertFalse(second.isActive)
        XCTAssertFalse(second.cancel())
        XCTAssertTrue(first.isActive, "the first registration, and its delivery, stay")
        registry.withObserversHere { (o: AlphaObserver) in o.alpha(1) }
        XCTAssertEqual(observer.recorded, ["alpha 1"], "still synchronous")
    }

    func testAnOldTokenDoesNotCancelALaterRegistrationOfTheSameObserver() {
        let registry = ObserverRegistry()
        let observer = AlphaOnly("a")
        let old = registry.addObserver(observer)
        XCTAssertTrue(registry.removeObserver(observer))
        let new = registry.addObserver(observer)
        XCTAssertFalse(old.isActive)
        XCTAssertFalse(old.cancel())
        XCTAssertTrue(new.isActive)
        XCTAssertTrue(registry.contains(observer))
    }

    func testATokenOfADeallocatedObserverIsInactive() {
        let registry = ObserverRegistry()
        var observer: AlphaOnly? = AlphaOnly("a")
        let token = registry.addObserver(observer!)
        observer = nil
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel())
    }

    func testABagCancelsItsRegistrations() {
        let registry = ObserverRegistry()
        let observer = AlphaOnly("a")
        do {
            let bag = SubscriptionBag()
            registry.addObserver(observer).store(in: bag)
            XCTAssertEqual(registry.observerCount, 1)
        }
        XCTAssertEqual(registry.observerCount, 0)
    }

    func testCancelAndWaitWaitsForAQueuedDeliveryThatHasStarted() throws {
        let registry = ObserverRegistry()
        let observer = AlphaOnly("a")
        let queue = DispatchQueue(label: "registry-token.wait")
        let token = registry.addObserver(observer, delivery: .queue(queue))
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = HeapAtomicWord<Bool>(false)
        registry.withObservers { (o: AlphaObserver) in
            entered.signal()
            _ = release.wait(timeout: .now() + 30)
            o.alpha(1)
            finished.store(true, ordering: .releasing)
        }
        XCTAssertEqual(entered.wait(timeout: .now() + 10), .success, "the queued delivery started")
        let failure = Locked<String?>(nil)
        let canceller = JoinableThread {
            do { try token.cancelAndWait() } catch { failure.withLock { $0 = "\(error)" } }
        }
        XCTAssertFalse(canceller.join(timeout: 0.05), "cancelAndWait returned while the delivery ran")
        release.signal()
        canceller.join()
        XCTAssertNil(failure.withLock { $0 })
        XCTAssertTrue(
            finished.load(ordering: .acquiring), "the started delivery finished before cancelAndWait returned")
        registry.withObservers { (o: AlphaObserver) in o.alpha(2) }
        queue.sync {}
        XCTAssertEqual(observer.recorded, ["alpha 1"])
    }

    func testCancelAndWaitInsideADeliveryThrows() {
        let registry = ObserverRegistry()
        let observer = AlphaOnly("a")
        let token = registry.addObserver(observer)
        var thrown: ObserverError?
        registry.withObserversHere { (_: AlphaObserver) in
            do throws(ObserverError) { try token.cancelAndWait() } catch { thrown = error }
        }
        XCTAssertEqual(thrown, .waitInsideDelivery)
        XCTAssertFalse(registry.contains(observer), "cancelled all the same")
    }

    func testKeyedTokensCancelTheirKeyOnly() {
        let registry = KeyedObserverRegistry()
        let observer = AlphaOnly("a")
        let a = registry.addObserver(observer, key: "A")
        let b = registry.addObserver(observer, key: "B")
        XCTAssertFalse(registry.addObserver(observer, key: "A").isActive, "duplicate")
        XCTAssertTrue(a.cancel())
        XCTAssertFalse(a.isActive)
        XCTAssertTrue(b.isActive)
        XCTAssertFalse(registry.contains(observer, key: "A"))
        XCTAssertTrue(registry.contains(observer, key: "B"))
        XCTAssertEqual(registry.keyCount, 1, "key A was freed with its last observer")
        XCTAssertTrue(b.cancel())
        XCTAssertEqual(registry.keyCount, 0)
    }

    // Found by the model-based test: a key's registry is made again after
    // the key is freed, and its own generations started over, so the old
    // token matched the new registration (isActive true, cancel removed it).
    func testAnOldKeyedTokenDoesNotMatchARegistrationInTheKeysNewRegistry() {
        let registry = KeyedObserverRegistry()
        let observer = AlphaOnly("a")
        let old = registry.addObserver(observer, key: "A")
        XCTAssertTrue(registry.removeObserver(observer, key: "A"))
        XCTAssertEqual(registry.keyCount, 0, "the key was freed")
        let new = registry.addObserver(observer, key: "A")
        XCTAssertFalse(old.isActive)
        XCTAssertFalse(old.cancel())
        XCTAssertTrue(new.isActive)
        XCTAssertTrue(registry.contains(observer, key: "A"))
    }
}
