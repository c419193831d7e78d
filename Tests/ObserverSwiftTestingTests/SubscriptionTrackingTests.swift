import Dispatch
import ObserverEngine
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

private final class Screen: Sendable {
    func render(_ value: Int) {}
}

private actor Tally {
    var total = 0
    func add(_ value: Int) { total += value }
}

/// The library's subscription tracking: what `ObserverCore.liveSubscriptions`
/// and a token's `debugDescription` say.
final class SubscriptionTrackingTests: XCTestCase {
    private var wasTracking = false

    override func setUp() {
        wasTracking = ObserverCore.isTrackingSubscriptions
        ObserverCore.isTrackingSubscriptions = true
    }

    override func tearDown() {
        ObserverCore.isTrackingSubscriptions = wasTracking
    }

    /// The listed entries made by `tokens`' subscriptions on `sourceType`.
    private func listed(on sourceType: String) -> [LiveSubscription] {
        ObserverCore.liveSubscriptions.filter { $0.sourceType == sourceType }
    }

    func testTurningTrackingOffOrOnAffectsOnlySubscriptionsMadeAfterwards() throws {
        let saved = Event<UInt8>()
        ObserverCore.isTrackingSubscriptions = false
        let untracked = saved.subscribe { _ in }
        XCTAssertEqual(listed(on: "Event<UInt8>").count, 0)
        XCTAssertEqual(untracked.debugDescription, "Subscription(active, not tracked)")
        ObserverCore.isTrackingSubscriptions = true
        XCTAssertEqual(listed(on: "Event<UInt8>").count, 0, "a subscription made while off stays untracked")
        let tracked = saved.subscribe { _ in }
        XCTAssertEqual(listed(on: "Event<UInt8>").count, 1)
        ObserverCore.isTrackingSubscriptions = false
        XCTAssertEqual(listed(on: "Event<UInt8>").count, 1, "turning it off forgets nothing already tracked")
        untracked.cancel()
        tracked.cancel()
        XCTAssertEqual(listed(on: "Event<UInt8>").count, 0)
    }

    func testTheEnvironmentVariablesValuesThatTurnItOn() {
        for value in ["1", "true", "TRUE", "yes", "Yes"] {
            XCTAssertTrue(SubscriptionTracking.isRequested(byEnvironmentValue: value), value)
        }
        for value in [nil, "", "0", "false", "no", "on", "11", " 1"] as [String?] {
            XCTAssertFalse(SubscriptionTracking.isRequested(byEnvironmentValue: value), "\(value ?? "nil")")
        }
    }

    func testListsKindSourceDeliveryAndDeliveriesOfEachForm() async throws {
        let saved = Event<Int16>()
        let screen = Screen()
        let tally = Tally()
        let queue = DispatchQueue(label: "tracking.log")
        let tokens = [
            saved.subscribe { _ in },
            saved.subscribe(delivery: .queue(queue)) { _ in },
            saved.subscribe { @MainActor _ in },
            saved.subscribe(screen) { screen, value in screen.render(Int(value)) },
            saved.subscribe(isolatedTo: tally) { tally, value in tally.add(Int(value)) },
        ]
        saved.send(1)
        saved.send(2)
        try await settleDeliveries()
        let listing = listed(on: "Event<Int16>")
        XCTAssertEqual(listing.map(\.kind), [.closure, .closure, .closure, .weakTarget, .actor])
        XCTAssertEqual(
            listing.map(\.delivery),
            ["synchronous", "queue \"tracking.log\"", "main actor", "synchronous", "isolated to Tally"])
        XCTAssertEqual(listing.map(\.deliveries), [2, 2, 2, 2, 2])
        XCTAssertEqual(listing.map(\.runningDeliveries), [0, 0, 0, 0, 0])
        for token in tokens { token.cancel() }
        XCTAssertEqual(listed(on: "Event<Int16>").count, 0)
    }

    func testEverySubscribeFormListsTheLineOfItsCall() {
        let saved = Event<Int8>()
        let prices = KeyedEvent<String, Int8>()
        let screen = Screen()
        let tally = Tally()
        let queue = DispatchQueue(label: "tracking.sites")
        let first = #line + 2
        let tokens = [
            saved.subscribe { _ in },
            saved.subscribe(delivery: .queue(queue)) { _ in },
            saved.subscribe(screen) { screen, value in screen.render(Int(value)) },
            saved.subscribe(screen, delivery: .queue(queue)) { screen, value in screen.render(Int(value)) },
            saved.subscribe(isolatedTo: tally) { tally, value in tally.add(Int(value)) },
            prices.subscribe(key: "a") { _ in },
            prices.subscribe(key: "a", delivery: .queue(queue)) { _ in },
            prices.subscribe(screen, key: "a") { screen, value in screen.render(Int(value)) },
            prices.subscribe(isolatedTo: tally, key: "a") { tally, value in tally.add(Int(value)) },
        ]
        let file = "ObserverSwiftTestingTests/SubscriptionTrackingTests.swift"
        let sites = ObserverCore.liveSubscriptions.filter { $0.fileID == file && ($0.line ?? 0) >= first }
            .compactMap(\.line).sorted()
        XCTAssertEqual(sites, Array(first..<(first + tokens.count)))
        for token in tokens { token.cancel() }
    }

    func testRegistryObserversAreListedWithTheLineOfAddObserver() {
        let registry = ObserverRegistry()
        let keyed = KeyedObserverRegistry()
        let observer = AlphaOnly("listed")
        let line = #line + 1
        let token = registry.addObserver(observer)
        let keyedToken = keyed.addObserver(observer, key: "k", delivery: .queue(.main))
        let entries = ObserverCore.liveSubscriptions.filter { $0.kind == .registryObserver && $0.line ?? 0 >= line }
        XCTAssertEqual(entries.map(\.sourceType), ["ObserverRegistry", "KeyedObserverRegistry"])
        XCTAssertEqual(
            entries.map(\.site),
            [
                "ObserverSwiftTestingTests/SubscriptionTrackingTests.swift:\(line)",
                "ObserverSwiftTestingTests/SubscriptionTrackingTests.swift:\(line + 1)",
            ])
        XCTAssertEqual(entries.map(\.detail), ["observer AlphaOnly", "key k, observer AlphaOnly"])
        XCTAssertEqual(entries.map(\.delivery), ["synchronous", "queue \"com.apple.main-thread\""])
        XCTAssertEqual(entries.map(\.deliveries), [nil, nil])
        token.cancel()
        XCTAssertEqual(
            ObserverCore.liveSubscriptions.filter { $0.kind == .registryObserver && $0.line ?? 0 >= line }.count, 1)
        keyedToken.cancel()
    }

    func testASubscriptionLeavesTheListingWhenItEndsOnItsOwn() throws {
        // A spent limit.
        let limited = Event<Int32>()
        _ = limited.subscribe(limit: 1) { _ in }
        XCTAssertEqual(listed(on: "Event<Int32>").count, 1)
        limited.send(1)
        XCTAssertEqual(listed(on: "Event<Int32>").count, 0)
        // The source deallocated.
        var source: Event<Int64>? = Event<Int64>()
        let token = source!.subscribe { _ in }
        XCTAssertEqual(listed(on: "Event<Int64>").count, 1)
        source = nil
        XCTAssertEqual(listed(on: "Event<Int64>").count, 0)
        XCTAssertFalse(token.isActive)
        // The target deallocated.
        let targeted = Event<UInt16>()
        var screen: Screen? = Screen()
        targeted.subscribe(screen!) { screen, value in screen.render(Int(value)) }
        XCTAssertEqual(listed(on: "Event<UInt16>").count, 1)
        screen = nil
        XCTAssertEqual(listed(on: "Event<UInt16>").count, 0)
        // A registry's observer deallocated.
        let registry = ObserverRegistry()
        var observer: AlphaOnly? = AlphaOnly("short-lived")
        registry.addObserver(observer!)
        XCTAssertTrue(
            ObserverCore.liveSubscriptions.contains {
                $0.detail == "observer AlphaOnly" && $0.sourceType == "ObserverRegistry"
            })
        observer = nil
        XCTAssertFalse(
            ObserverCore.liveSubscriptions.contains {
                $0.detail == "observer AlphaOnly" && $0.sourceType == "ObserverRegistry"
            })
    }

    func testDebugDescriptionShowsWhatIsKnown() throws {
        let saved = Event<UInt32>()
        let queue = DispatchQueue(label: "described")
        let line = #line + 1
        let token = saved.subscribe(delivery: .queue(queue)) { _ in }
        XCTAssertEqual(
            token.debugDescription,
            "Subscription(active, closure on Event<UInt32>, queue \"described\", made at "
                + "ObserverSwiftTestingTests/SubscriptionTrackingTests.swift:\(line), 0 deliveries)")
        let recorder = saved.record()
        saved.send(5)
        let recorded = ObserverCore.liveSubscriptions.last { $0.sourceType == "Event<UInt32>" }
        XCTAssertEqual(recorded?.deliveries, 1)
        XCTAssertEqual(recorded?.fileID, "ObserverSwiftTestingTests/SubscriptionTrackingTests.swift")
        token.cancel()
        XCTAssertTrue(token.debugDescription.hasPrefix("Subscription(inactive"), token.debugDescription)
        recorder.cancel()
        let inactive = saved.subscribe(limit: 0) { _ in }
        XCTAssertEqual(inactive.debugDescription, "Subscription(inactive, not tracked)")
    }

    func testConcurrentSubscribersAndSendersAreAllCountedAndListed() throws {
        let saved = Event<UInt64>()
        let tokens = Received<Subscription>()
        let threads = (0..<4).map { _ in
            JoinableThread {
                for _ in 0..<50 { tokens.append(saved.subscribe { _ in }) }
            }
        }
        let sender = JoinableThread { for value in 0..<200 { saved.send(UInt64(value)) } }
        for thread in threads { thread.join() }
        sender.join()
        XCTAssertEqual(listed(on: "Event<UInt64>").count, 200)
        let before = listed(on: "Event<UInt64>").reduce(0) { $0 + ($1.deliveries ?? 0) }
        saved.send(0)
        let after = listed(on: "Event<UInt64>").reduce(0) { $0 + ($1.deliveries ?? 0) }
        XCTAssertEqual(after - before, 200, "one send reaches each of the 200 and each counts it once")
        let cancellers = tokens.values.chunked(4).map { chunk in
            JoinableThread { for token in chunk { token.cancel() } }
        }
        for thread in cancellers { thread.join() }
        XCTAssertEqual(listed(on: "Event<UInt64>").count, 0)
    }
}

extension Array {
    fileprivate func chunked(_ parts: Int) -> [[Element]] {
        let size = (count + parts - 1) / parts
        return stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
