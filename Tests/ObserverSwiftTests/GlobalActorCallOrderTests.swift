import Dispatch
import Foundation
import ObserverEngine
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

@globalActor
actor Worker {
    static let shared = Worker()
}

protocol Ping: AnyObject {
    func ping(_ number: Int)
}

protocol Pong: AnyObject {
    func pong(_ number: Int)
}

/// An observer isolated to `Worker` that conforms to two protocols, both
/// conformances isolated to `Worker`: it records the numbers of the calls
/// in the order they run.
@Worker
final class PingPongJob {
    private var numbers: [Int] = []
    private let onCall: @Sendable () -> Void

    nonisolated init(onCall: @escaping @Sendable () -> Void) {
        self.onCall = onCall
    }

    func record(_ number: Int) {
        numbers.append(number)
        onCall()
    }

    func received() -> [Int] { numbers }
}

extension PingPongJob: @Worker Ping {
    func ping(_ number: Int) { record(number) }
}

extension PingPongJob: @Worker Pong {
    func pong(_ number: Int) { record(number) }
}

/// Calls to one observer isolated to a global actor run on that actor in the
/// order they were made, whichever protocol and whichever registry made
/// them.
final class GlobalActorCallOrderTests: XCTestCase {
    private static let callCount = 400

    /// Makes `callCount` calls from one new thread, then waits (30 s at most)
    /// until the job has run all of them, and returns what it received.
    private func received(
        by job: PingPongJob, arrived: XCTestExpectation, after calls: @escaping @Sendable (Int) -> Void
    ) -> [Int] {
        let sent = expectation(description: "calls made")
        Thread {
            for number in 1...Self.callCount { calls(number) }
            sent.fulfill()
        }.start()
        waitUntilFulfilled([sent, arrived], timeout: 30)
        let result = Locked<[Int]>([])
        let read = DispatchSemaphore(value: 0)
        Task {
            let numbers = await job.received()
            result.withLock { $0 = numbers }
            read.signal()
        }
        XCTAssertEqual(read.wait(timeout: .now() + 30), .success, "reading what the job received")
        return result.withLock { $0 }
    }

    private func makeJob() -> (PingPongJob, XCTestExpectation) {
        let arrived = expectation(description: "\(Self.callCount) calls run")
        arrived.expectedFulfillmentCount = Self.callCount
        arrived.assertForOverFulfill = true
        return (PingPongJob { arrived.fulfill() }, arrived)
    }

    /// The pairs of neighbours in `numbers` that are not in increasing order.
    private func outOfOrderPairs(_ numbers: [Int]) -> [(Int, Int)] {
        zip(numbers, numbers.dropFirst()).filter { $0.0 >= $0.1 }
    }

    func testCallsThroughTwoProtocolsRunInTheOrderTheyWereMade() {
        let registry = ObserverRegistry()
        let (job, arrived) = makeJob()
        registry.addObserver(job)
        let numbers = received(by: job, arrived: arrived) { number in
            if number % 2 == 1 {
                registry.withObservers { (observer: Ping) in observer.ping(number) }
            } else {
                registry.withObservers { (observer: Pong) in observer.pong(number) }
            }
        }
        XCTAssertEqual(numbers.count, Self.callCount)
        let outOfOrder = outOfOrderPairs(numbers)
        XCTAssertTrue(
            outOfOrder.isEmpty, "\(outOfOrder.count) pairs out of order, first \(outOfOrder.prefix(3)); \(numbers)")
    }

    func testCallsThroughTwoRegistriesRunInTheOrderTheyWereMade() {
        let first = ObserverRegistry()
        let second = ObserverRegistry()
        let (job, arrived) = makeJob()
        first.addObserver(job)
        second.addObserver(job)
        let numbers = received(by: job, arrived: arrived) { number in
            if number % 2 == 1 {
                first.withObservers { (observer: Ping) in observer.ping(number) }
            } else {
                second.withObservers { (observer: Ping) in observer.ping(number) }
            }
        }
        XCTAssertEqual(numbers.count, Self.callCount)
        let outOfOrder = outOfOrderPairs(numbers)
        XCTAssertTrue(
            outOfOrder.isEmpty, "\(outOfOrder.count) pairs out of order, first \(outOfOrder.prefix(3)); \(numbers)")
    }
}
