import Dispatch
import Foundation
import Observation
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// User code that an `ObservableValue` runs while it holds the value's turn
/// (a replay for a new observer, an Observation `onChange`) counts as inside
/// a delivery: the wait calls throw `waitInsideDelivery` there instead of
/// waiting (which can deadlock with a sender whose handler sets the value).
final class WaitInsideReplayTests: XCTestCase {
    private final class Target: Sendable {}

    /// Runs `body` on its own thread; fails (instead of hanging the suite)
    /// when it does not finish within `seconds`.
    private func runBounded(_ name: String, seconds: Double = 10, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        XCTAssertEqual(done.wait(timeout: .now() + seconds), .success, "\(name): deadlocked")
    }

    func testCancelAndWaitInsideAnAddObserverReplayThrows() {
        let value = ObservableValue(1)
        let other = value.subscribe { _ in }
        let outcome = Locked<[String]>([])
        runBounded("addObserver replay") {
            _ = value.replaying.subscribe { _ in
                outcome.withLock { $0.append(ObserverCore.isInsideDelivery ? "inside" : "outside") }
                do {
                    try other.cancelAndWait()
                    outcome.withLock { $0.append("returned") }
                } catch {
                    outcome.withLock { $0.append("threw \(error)") }
                }
            }
        }
        XCTAssertEqual(outcome.withLock { $0 }, ["inside", "threw \(ObserverError.waitInsideDelivery)"])
        XCTAssertFalse(other.isActive, "cancelled all the same")
        XCTAssertNoThrow(try ObserverCore.reclaimNow(), "outside the replay: no throw")
    }

    func testReclaimNowInsideABindReplayThrows() {
        let value = ObservableValue("a")
        let target = Target()
        let outcome = Locked<[String]>([])
        value.replaying.subscribe(target) { _, _ in
            do {
                try ObserverCore.reclaimNow()
                outcome.withLock { $0.append("returned") }
            } catch {
                outcome.withLock { $0.append("threw") }
            }
        }
        XCTAssertEqual(outcome.withLock { $0 }, ["threw"])
        withExtendedLifetime(target) {}
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testWaitInsideAnObservationOnChangeThrows() {
        let value = ObservableValue(0)
        let other = value.subscribe { _ in }
        let outcome = Locked<[String]>([])
        withObservationTracking {
            _ = value.value
        } onChange: {
            do {
                try other.cancelAndWait()
                outcome.withLock { $0.append("returned") }
            } catch {
                outcome.withLock { $0.append("threw") }
            }
        }
        runBounded("onChange") { value.value = 1 }
        XCTAssertEqual(outcome.withLock { $0 }, ["threw"])
    }

    /// The deadlock the issue reproduced: a replay handler waits while a
    /// sender's handler (inside its send) sets the same value and so waits
    /// for the turn the replay holds.
    func testReplayThatWaitsWhileASenderSetsTheValueDoesNotDeadlock() {
        let value = ObservableValue(0)
        let setToFive = DispatchSemaphore(value: 0)
        let watcher = value.subscribe { if $0 == 5 { setToFive.signal() } }
        let trigger = Event<Int>()
        let replayStarted = DispatchSemaphore(value: 0)
        let senderInHandler = DispatchSemaphore(value: 0)
        let setter = trigger.subscribe { newValue in
            senderInHandler.signal()
            value.value = newValue  // waits for the turn the replay holds
        }
        let victim = trigger.subscribe { _ in }
        Thread {
            replayStarted.wait()
            trigger.send(5)
        }.start()
        let outcome = Locked<String>("")
        runBounded("replay + sender") {
            _ = value.replaying.subscribe { replayed in
                guard replayed == 0 else { return }
                replayStarted.signal()
                senderInHandler.wait()
                Thread.sleep(forTimeInterval: 0.05)  // let the sender block on the turn
                do {
                    try victim.cancelAndWait()
                    outcome.withLock { $0 = "returned" }
                } catch {
                    outcome.withLock { $0 = "threw" }
                }
            }
        }
        XCTAssertEqual(outcome.withLock { $0 }, "threw")
        XCTAssertEqual(setToFive.wait(timeout: .now() + 10), .success, "the sender's set must go through")
        XCTAssertEqual(value.value, 5)
        setter.cancel()
        watcher.cancel()
    }
}
