@_spi(EngineDiagnostics) import ObserverSwift
import XCTest

/// Bad input at the Swift level: every case is a documented no-op with a
/// clear result, never a crash and never the removal of somebody else.
/// (The C-level cases, NULL lists and allocation failures, are in
/// `CObserverCoreTests`.)
final class BadInputTests: XCTestCase {
    func testStaleAndDoubleCancel() {
        for kind in ReliabilityObserverKinds.allWithRegistries {
            let source = kind.makeSource()
            let calls = CallLog()
            let token = source.subscribe { calls.append("a \($0)") }
            let other = source.subscribe { calls.append("b \($0)") }
            XCTAssertTrue(token.cancel(), kind.name)
            XCTAssertFalse(token.cancel(), "\(kind.name): double cancel must report false")
            XCTAssertFalse(token.cancel(), kind.name)
            // The slot is reused by a newcomer: the stale token must not remove it.
            let newcomer = source.subscribe { calls.append("c \($0)") }
            XCTAssertFalse(token.cancel(), "\(kind.name): stale token removed a newcomer in its old slot")
            source.send(1)
            XCTAssertEqual(Set(calls.entries), ["b 1", "c 1"], kind.name)
            XCTAssertTrue(other.isActive && newcomer.isActive && !token.isActive, kind.name)
            source.unsubscribeAll()
        }
    }

    func testForeignTokenCannotAffectAnotherSource() {
        for kind in ReliabilityObserverKinds.allWithRegistries {
            let first = kind.makeSource()
            let second = kind.makeSource()
            let calls = CallLog()
            let firstToken = first.subscribe { calls.append("first \($0)") }
            let secondToken = second.subscribe { calls.append("second \($0)") }
            // Same slot index, different sources: cancelling one leaves the other.
            XCTAssertTrue(firstToken.cancel(), kind.name)
            XCTAssertTrue(secondToken.isActive, kind.name)
            second.send(1)
            XCTAssertEqual(calls.entries, ["second 1"], kind.name)
            secondToken.cancel()
        }
    }

    func testRemovingSomethingNeverAdded() {
        for kind in ReliabilityObserverKinds.allWithRegistries {
            let source = kind.makeSource()
            let stranger = ReliabilityTarget(identifier: 99)
            let calls = CallLog()
            let token = source.subscribe { calls.append("a \($0)") }
            if source.supportsTargets {
                XCTAssertEqual(source.unsubscribe(target: stranger), 0, kind.name)
            }
            source.send(1)
            XCTAssertEqual(calls.entries, ["a 1"], kind.name)
            token.cancel()
            XCTAssertEqual(source.unsubscribeAll(), 0, "\(kind.name): unsubscribeAll on an empty source")
            XCTAssertEqual(source.unsubscribeAll(), 0, kind.name)
        }
    }

    func testTokenOutlivingItsSource() throws {
        for kind in ReliabilityObserverKinds.allWithRegistries {
            var source: (any ReliabilitySource)? = kind.makeSource()
            let token = source!.subscribe { _ in }
            source = nil
            XCTAssertFalse(token.isActive, kind.name)
            XCTAssertFalse(token.cancel(), "\(kind.name): cancel after the source is gone is a no-op")
            try token.cancelAndWait()
        }
    }

    func testDeadTargetSubscriptionIsInertAndReclaimed() throws {
        for kind in ReliabilityObserverKinds.allWithRegistries {
            let source = kind.makeSource()
            guard source.supportsTargets else { continue }
            try ObserverCore.reclaimNow()
            let liveBaseline = ReliabilityLiveInstances.current
            var target: ReliabilityTarget? = ReliabilityTarget(identifier: 1)
            let calls = CallLog()
            let token = { () -> Subscription in
                let capture = ReliabilityTrackedCapture()
                return source.subscribe(target: target!) { _, value in
                    capture.checkIntact()
                    calls.append("\(value)")
                }
            }()
            target = nil
            source.send(1)
            XCTAssertEqual(calls.entries, [], kind.name)
            XCTAssertFalse(token.isActive, "\(kind.name): a dead target's slot is freed by the next send")
            XCTAssertFalse(token.cancel(), kind.name)
            try ObserverCore.reclaimNow()
            XCTAssertEqual(ReliabilityLiveInstances.current, liveBaseline, kind.name)
        }
    }
}
