import Dispatch
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

private final class Screen: Sendable {
    func render(_ value: Int) {}
}

final class LeakCheckTests: XCTestCase {
    func testPassesWhenEverySubscriptionItMadeEnded() async throws {
        let saved = Event<Int>()
        try await expectNoLeakedSubscriptions {
            let token = saved.subscribe { _ in }
            let queued = saved.subscribe(delivery: .queue(DispatchQueue(label: "q"))) { _ in }
            do {
                let screen = Screen()
                saved.subscribe(screen) { screen, value in screen.render(value) }
            }
            saved.subscribe(limit: 1) { _ in }.store(in: SubscriptionBag())
            saved.send(1)
            token.cancel()
            queued.cancel()
        }
    }

    func testFailsOnADeliberateLeakNamingItsKindSourceDeliveryAndLine() async throws {
        let saved = Event<Int>()
        let registry = ObserverRegistry()
        let observer = AlphaOnly("leaky")
        var kept: [Any] = []
        var recorderLine = 0
        var observerLine = 0
        do {
            try await expectNoLeakedSubscriptions {
                recorderLine = #line + 1
                kept.append(saved.record())
                observerLine = #line + 1
                kept.append(registry.addObserver(observer, delivery: .queue(DispatchQueue(label: "alpha"))))
            }
            XCTFail("two leaked subscriptions went unnoticed")
        } catch {
            XCTAssertEqual(
                "\(error)",
                """
                2 subscriptions leaked (still active):
                  - closure on Event<Int>, synchronous, made at ObserverSwiftTestingTests/LeakCheckTests.swift:\
                \(recorderLine), 0 deliveries
                  - registry observer on ObserverRegistry, queue "alpha", made at \
                ObserverSwiftTestingTests/LeakCheckTests.swift:\(observerLine), observer AlphaOnly
                """)
        }
        kept.removeAll()
        registry.removeAllObservers()
    }

    func testChecksOnlyTheSubscriptionsItsBodyMade() async throws {
        let saved = Event<Int>()
        let outside = saved.record()
        let madeElsewhere = Received<Subscription>()
        try await expectNoLeakedSubscriptions {
            // Made by a thread that is not the checked code's task while it runs.
            let other = JoinableThread { madeElsewhere.append(saved.subscribe { _ in }) }
            other.join()
        }
        saved.send(1)
        XCTAssertEqual(outside.values, [1], "the subscription made before the check is alive and not a leak of it")
        for token in madeElsewhere.values { token.cancel() }
    }

    func testTheXCTestFormListsWhatWasMadeSinceItStarted() async throws {
        let saved = Event<Int>()
        let before = saved.subscribe { _ in }
        let check = SubscriptionLeakCheck()
        let leaked = saved.subscribe(delivery: .queue(DispatchQueue(label: "late"))) { _ in }
        XCTAssertEqual(check.activeSubscriptions.count, 1)
        do {
            try await check.verify()
            XCTFail("a leaked subscription went unnoticed")
        } catch {
            XCTAssertTrue(
                "\(error)".hasPrefix(
                    "1 subscription leaked (still active):\n  - closure on Event<Int>, queue \"late\""),
                "\(error)")
        }
        leaked.cancel()
        try await check.verify()
        try check.verifyWithoutSettling()
        before.cancel()
    }
}
