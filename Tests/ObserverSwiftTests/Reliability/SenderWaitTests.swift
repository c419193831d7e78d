import Dispatch
import Foundation
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// The README's "Senders never block" guarantee, exactly as stated: an
/// `Event` send never waits for another thread's handler; an
/// `ObservableValue` set waits only while another thread's set of the same
/// value runs its synchronous handlers (that wait is what keeps set order),
/// never for its queue, main-actor or actor observers, and reading `value`
/// never waits.
final class SenderWaitTests: XCTestCase {
    /// Runs `body` on a thread of its own; the semaphore is signalled when it returns.
    private func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        spawnThread(body)
    }

    func testEventSendNeverWaitsForAnotherThreadsHandler() {
        let event = Event<Int>()
        let inHandler = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let token = event.subscribe { value in
            if value == 1 {
                inHandler.signal()
                _ = release.wait(timeout: .now() + 10)
            }
        }
        let first = onThread { event.send(1) }
        XCTAssertEqual(inHandler.wait(timeout: .now() + 5), .success)
        let second = onThread { event.send(2) }
        XCTAssertEqual(
            second.wait(timeout: .now() + 5), .success, "the second send returned while the first handler runs")
        release.signal()
        XCTAssertEqual(first.wait(timeout: .now() + 5), .success)
        token.cancel()
    }

    func testValueSetWaitsForAnotherThreadsSynchronousHandlerAndKeepsSetOrder() {
        let number = ObservableValue(0)
        let seen = Received<Int>()
        let inHandler = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let observer = number.subscribe { value in
            seen.append(value)
            if value == 1 {
                inHandler.signal()
                _ = release.wait(timeout: .now() + 10)
            }
        }
        let first = onThread { number.value = 1 }
        XCTAssertEqual(inHandler.wait(timeout: .now() + 5), .success)
        let second = onThread { number.value = 2 }
        XCTAssertEqual(
            second.wait(timeout: .now() + 0.2), .timedOut,
            "a set waits while another thread's set runs the synchronous handlers")
        XCTAssertEqual(number.value, 1, "reading the value does not wait")
        release.signal()
        XCTAssertEqual(second.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(first.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(seen.values, [1, 2], "in set order")
        observer.cancel()
    }

    func testValueSetNeverWaitsForQueueOrActorObservers() {
        let number = ObservableValue(0)
        let queue = DispatchQueue(label: "slow observer")
        let inHandler = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let queued = number.subscribe(delivery: .queue(queue)) { value in
            if value == 1 {
                inHandler.signal()
                _ = release.wait(timeout: .now() + 10)
            }
        }
        let recorder = GatedRecorder()
        let entered = DispatchSemaphore(value: 0)
        let releaseActor = DispatchSemaphore(value: 0)
        Task { await recorder.occupy(entered: entered, release: releaseActor) }
        XCTAssertEqual(entered.wait(timeout: .now() + 5), .success)
        let bound = number.subscribe(isolatedTo: recorder) { recorder, value in recorder.record(value) }
        number.value = 1
        XCTAssertEqual(inHandler.wait(timeout: .now() + 5), .success)
        let other = onThread {
            for value in 2...100 { number.value = value }
        }
        XCTAssertEqual(
            other.wait(timeout: .now() + 5), .success,
            "sets return while a queue observer and an actor observer are busy")
        XCTAssertEqual(number.value, 100)
        release.signal()
        releaseActor.signal()
        queue.sync {}
        queued.cancel()
        bound.cancel()
    }
}
