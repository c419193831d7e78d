import Foundation
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// A key whose `==` is false even for itself, like `Double.nan`.
private struct NeverEqualKey: Hashable, Sendable {
    let id: Int
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
    static func == (lhs: NeverEqualKey, rhs: NeverEqualKey) -> Bool { false }
}

/// A key whose hash changes between calls (a broken `Hashable`).
private final class DriftingHashKey: Hashable, @unchecked Sendable {
    // @unchecked: `drift` is only touched by the test's thread.
    private var drift = 0
    func hash(into hasher: inout Hasher) {
        drift += 1
        hasher.combine(drift)
    }
    static func == (lhs: DriftingHashKey, rhs: DriftingHashKey) -> Bool { lhs === rhs }
}

/// Cancellation goes by handle: it works whatever the key's `==` and hash
/// do. What sends to such keys do is documented on `KeyedEvent`.
final class KeyedIrregularKeyTests: XCTestCase {
    override func tearDown() {
        XCTAssertNoThrow(try ObserverCore.reclaimNow())
        super.tearDown()
    }

    func testANaNKeyCanBeCancelledAndNoSendReachesIt() {
        let event = KeyedEvent<Double, Int>()
        let tally = KeyedTally()
        let token = event.subscribe(key: .nan) { tally.add("nan", $0) }
        let once = event.subscribe(key: .nan, limit: 1) { tally.add("once", $0) }
        XCTAssertTrue(token.isActive)
        XCTAssertEqual(event.subscribersCount, 2)

        event.send(1, forKey: .nan)  // NaN equals no key, not even itself
        XCTAssertEqual(tally.all, [:])

        XCTAssertTrue(token.cancel(), "a NaN key's subscription must be cancellable")
        XCTAssertFalse(token.isActive)
        XCTAssertFalse(token.cancel())
        XCTAssertTrue(once.cancel())
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertEqual(event.keyCount, 0, "the NaN keys must go with their last subscription")
    }

    func testAKeyNotEqualToItselfCanBeCancelledOverSeveralKeys() {
        let event = KeyedEvent<NeverEqualKey, Int>()
        let token = event.forKeys([NeverEqualKey(id: 1), NeverEqualKey(id: 2)]).subscribe { _, _ in }
        let target = KeyedTarget()
        let bound = event.subscribe(target, key: NeverEqualKey(id: 1)) { _, _ in }
        XCTAssertEqual(event.subscribersCount, 2)
        XCTAssertTrue(token.cancel())
        XCTAssertTrue(bound.cancel())
        XCTAssertEqual(event.keyCount, 0)
        withExtendedLifetime(target) {}
    }

    func testAKeyWhoseHashDriftsCanBeCancelled() {
        let event = KeyedEvent<DriftingHashKey, Int>()
        let key = DriftingHashKey()
        let token = event.subscribe(key: key) { _ in }
        XCTAssertTrue(token.isActive)
        XCTAssertTrue(token.cancel())
        XCTAssertEqual(event.keyCount, 0)
    }
}
