import Foundation
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// The sole-handler form under concurrency, a fresh source per round so that
/// every round crosses the boundary: a sender with delivery accounting, two
/// threads cancelling the sole handler's token, and a third moving it into a
/// list by subscribing, all at once; and a source deallocated while its sole
/// token is cancelled on another thread (AddressSanitizer's case).
final class SoleHandlerRaceTests: XCTestCase {
    /// Per value, what the accounting demands of one subscription.
    struct Demand {
        var mustReceive = false
        var mustNotReceive = false
    }

    func testCancelsGrowthAndSendsRaceWithExactAccounting() {
        let rounds = 300
        let sends = 200
        for round in 0..<rounds {
            let event = Event<Int>()
            let first = Received<Int>()
            let second = Received<Int>()
            let a = event.subscribe { first.append($0) }
            let cancelStarted = SharedVariable(false)
            let cancelReturned = SharedVariable(false)
            let secondSubscribed = SharedVariable(false)
            let secondToken = SharedVariable<Subscription?>(nil)
            let cancelResults = Received<Bool>()
            let demandsOfFirst = SharedVariable([Demand](repeating: Demand(), count: sends))
            let demandsOfSecond = SharedVariable([Demand](repeating: Demand(), count: sends))
            let go = SharedVariable(false)
            let cancelAt = round % 7

            let sender = JoinableThread {
                while !go.value {}
                for value in 0..<sends {
                    let cancelledBefore = cancelReturned.value
                    let secondBefore = secondSubscribed.value
                    event.send(value)
                    let cancelStartedAfter = cancelStarted.value
                    demandsOfFirst.update {
                        $0[value].mustReceive = !cancelStartedAfter
                        $0[value].mustNotReceive = cancelledBefore
                    }
                    demandsOfSecond.update { $0[value].mustReceive = secondBefore }
                }
            }
            let cancellers = (0..<2).map { index in
                JoinableThread {
                    while !go.value {}
                    for _ in 0..<(cancelAt * 20 + index) { _ = event.subscribersCount }
                    cancelStarted.value = true
                    let removed = a.cancel()
                    cancelResults.append(removed)
                    if removed { cancelReturned.value = true }
                }
            }
            let grower = JoinableThread {
                while !go.value {}
                for _ in 0..<((6 - cancelAt) * 20) { _ = event.subscribersCount }
                secondToken.value = event.subscribe { second.append($0) }
                secondSubscribed.value = true
            }
            go.value = true
            sender.join()
            for canceller in cancellers { canceller.join() }
            grower.join()

            XCTAssertEqual(cancelResults.values.filter { $0 }.count, 1, "round \(round): one cancel removes it")
            XCTAssertFalse(a.isActive)
            let firstValues = first.values
            XCTAssertEqual(Set(firstValues).count, firstValues.count, "round \(round): no value twice")
            XCTAssertEqual(firstValues, firstValues.sorted(), "round \(round): in send order")
            for (value, demand) in demandsOfFirst.value.enumerated() {
                if demand.mustReceive { XCTAssertTrue(firstValues.contains(value), "round \(round): \(value) lost") }
                if demand.mustNotReceive {
                    XCTAssertFalse(firstValues.contains(value), "round \(round): \(value) after cancel")
                }
            }
            let secondValues = second.values
            XCTAssertEqual(Set(secondValues).count, secondValues.count, "round \(round): no value twice")
            for (value, demand) in demandsOfSecond.value.enumerated() where demand.mustReceive {
                XCTAssertTrue(secondValues.contains(value), "round \(round): \(value) lost by the second")
            }
            XCTAssertEqual(event.subscribersCount, 1)
            secondToken.value?.cancel()
            if testRun?.hasSucceeded == false { return }
        }
    }

    func testASourceDeallocatedWhileItsSoleTokenIsCancelled() throws {
        let deinits = Received<Int>()
        final class Tracked: Sendable {
            let deinits: Received<Int>
            init(_ deinits: Received<Int>) { self.deinits = deinits }
            deinit { deinits.append(1) }
        }
        let rounds = 500
        for round in 0..<rounds {
            let holder = SharedVariable<Event<Int>?>(Event<Int>())
            let token: Subscription
            do {
                let tracked = Tracked(deinits)
                token = holder.value!.subscribe { _ in _ = tracked }
            }
            let go = SharedVariable(false)
            let releaser = JoinableThread {
                while !go.value {}
                for _ in 0..<(round % 5) { _ = holder.value?.subscribersCount }
                holder.value = nil
            }
            let canceller = JoinableThread {
                while !go.value {}
                _ = token.cancel()
            }
            go.value = true
            releaser.join()
            canceller.join()
            XCTAssertFalse(token.isActive)
            XCTAssertFalse(token.cancel())
        }
        try ObserverCore.reclaimNow()
        XCTAssertEqual(deinits.count, rounds, "every closure's captures are released")
    }

    func testUnsubscribeAllAndGrowthRaceOnAFreshSource() {
        for round in 0..<300 {
            let event = Event<Int>()
            let received = Received<Int>()
            let a = event.subscribe { received.append($0) }
            let go = SharedVariable(false)
            let removedByAll = SharedVariable(0)
            let tokens = Received<Subscription>()
            let clearer = JoinableThread {
                while !go.value {}
                removedByAll.value = event.unsubscribeAll()
            }
            let grower = JoinableThread {
                while !go.value {}
                tokens.append(event.subscribe { _ in })
            }
            go.value = true
            clearer.join()
            grower.join()
            let cancelled = a.cancel()
            XCTAssertFalse(a.isActive, "round \(round)")
            event.send(1)
            XCTAssertEqual(received.values, [], "round \(round): a removed handler is not called")
            // Each of the two subscriptions is removed once, by unsubscribeAll
            // or (`a`) its own cancel, or is still there.
            XCTAssertEqual(removedByAll.value + (cancelled ? 1 : 0) + event.subscribersCount, 2, "round \(round)")
            for token in tokens.values { token.cancel() }
        }
    }
}
