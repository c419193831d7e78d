import Foundation
import ObserverNATS
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

/// Exports, imports and mirrors are subscription tokens: a `SubscriptionBag` or a
/// `Set<Subscription>` holds them and cancels them.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSTokenTests: XCTestCase {
    func testABagCancelsExportsImportsAndMirrors() async throws {
        let (publisher, subscriber) = try makeBridgePair()
        let subject = NATSTestEnvironment.uniqueSubject()
        let local = Event<Int>()
        let remote = Event<Int>()
        let received = remote.record()

        var bag: SubscriptionBag? = SubscriptionBag()
        let export = try publisher.export(local, to: subject)
        export.store(in: bag!)
        let imported = try subscriber.import(subject, into: remote)
        imported.store(in: bag!)
        let value = ObservableValue(0)
        let mirror = try publisher.mirror(
            value, bucket: "tokens", key: subject.replacingOccurrences(of: ".", with: "-"))
        mirror.store(in: bag!)
        XCTAssertEqual(bag!.count, 3)
        XCTAssertTrue(export.isActive && imported.isActive && mirror.isActive)

        local.send(1)
        let first = try await received.next(timeout: .seconds(10))
        XCTAssertEqual(first, 1)
        bag = nil
        XCTAssertFalse(export.isActive)
        XCTAssertFalse(imported.isActive)
        XCTAssertFalse(mirror.isActive)
        XCTAssertFalse(export.cancel(), "cancelled already, by the bag")
        XCTAssertFalse(imported.cancel())
        XCTAssertFalse(mirror.cancel())
        local.send(2)
        value.value = 5
        try await received.expectNoMoreValues(within: .milliseconds(200))
        XCTAssertEqual(received.values, [1], "nothing published or delivered after the bag went")
        XCTAssertEqual(mirror.publishedCount, 1, "the initial value only")
    }

    func testTokensInASetAndTheirCancelResult() throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        let subject = NATSTestEnvironment.uniqueSubject()
        var tokens = Set<Subscription>()
        try bridge.import(subject, into: Event<Int>()).store(in: &tokens)
        let export = try bridge.export(Event<Int>(), to: subject)
        export.store(in: &tokens)
        XCTAssertEqual(tokens.count, 2)
        XCTAssertTrue(export.isActive)
        tokens.removeAll()
        XCTAssertFalse(export.isActive, "a token released from the set cancels")

        let other = try bridge.export(Event<Int>(), to: subject)
        let subscription = other.subscription
        XCTAssertTrue(subscription.isActive)
        XCTAssertTrue(subscription.cancel())
        XCTAssertFalse(subscription.cancel())
        XCTAssertFalse(other.isActive)

        // Closing the bridge ends what it runs: tokens say so, and cancelling them changes nothing.
        let last = try bridge.import(subject, into: Event<Int>())
        XCTAssertTrue(last.subscription.isActive)
        bridge.close()
        XCTAssertFalse(last.isActive)
        XCTAssertFalse(last.subscription.isActive)
        XCTAssertFalse(last.cancel())
    }
}
