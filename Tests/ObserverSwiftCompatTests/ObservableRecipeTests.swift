import Foundation
import ObserverTestSupport
import XCTest

@testable import ObserverSwiftCompat

/// What an observer call saw: the value and whether it ran on the main thread.
private struct Call: Equatable, Sendable {
    let value: Int
    let onMainThread: Bool
}

/// A binding target for the tests that mix `bind` with the recipe's observer.
private final class Label: Sendable {
    let texts = Received<String>()
}

/// Runs what the main queue holds now (a block enqueued last runs after it),
/// on the main thread the test runs on.
private func flushMainQueue() {
    let flushed = LockedCounter()
    DispatchQueue.main.async { flushed.increment() }
    runMainLoop { flushed.value == 1 }
    XCTAssertEqual(flushed.value, 1, "the main queue did not run within 5 s")
}

/// The minimal `Observable<T>(value:)` recipe: one observer, set by
/// `addObserver(fireNow:_:)` (called at once by default, then on the main
/// queue after each set) and removed by `removeObserver()`.
final class ObservableRecipeTests: XCTestCase {
    /// Tracked subscriptions (on once the testing product ran in this
    /// process) hold the recipe's process-lifetime marker weakly: a weak
    /// reference in a global keeps its side table visible to LeakSanitizer
    /// (see LeakSanitizerSupport in ObserverSwiftTests).
    override class func setUp() {
        super.setUp()
        pinnedRecipeMarker = RecipeObserver.marker
    }

    func testAddObserverCallsAtOnceThenOnTheMainQueueAfterEachSet() {
        let count = Observable<Int>(value: 1)
        let calls = Received<Call>()
        count.addObserver { calls.append(Call(value: $0, onMainThread: Thread.isMainThread)) }
        XCTAssertEqual(calls.values, [Call(value: 1, onMainThread: true)], "fireNow: called before addObserver returns")

        count.value = 2
        count.value = 3
        XCTAssertEqual(calls.count, 1, "a set on the main thread is delivered later, on the main queue")
        flushMainQueue()
        XCTAssertEqual(calls.values.map(\.value), [1, 2, 3])
        XCTAssertTrue(calls.values.allSatisfy(\.onMainThread))
        count.removeObserver()
    }

    func testFireNowFalseWaitsForTheFirstSet() {
        let name = Observable(value: "Ada")
        let seen = Received<String>()
        name.addObserver(fireNow: false) { seen.append($0) }
        flushMainQueue()
        XCTAssertEqual(seen.values, [])
        name.value = "Grace"
        flushMainQueue()
        XCTAssertEqual(seen.values, ["Grace"])
        name.removeObserver()
    }

    func testFireNowRunsOnTheCallingThread() {
        let count = Observable(value: 7)
        let calls = Received<Call>()
        JoinableThread {
            count.addObserver { calls.append(Call(value: $0, onMainThread: Thread.isMainThread)) }
        }.join()
        XCTAssertEqual(calls.values, [Call(value: 7, onMainThread: false)])
        count.removeObserver()
    }

    func testAddObserverReplacesTheObserverAnEarlierAddObserverSet() {
        let count = Observable(value: 0)
        let first = Received<Int>()
        let second = Received<Int>()
        count.addObserver(fireNow: false) { first.append($0) }
        count.addObserver(fireNow: false) { second.append($0) }
        XCTAssertEqual(count.observersCount, 1)
        count.value = 1
        flushMainQueue()
        XCTAssertEqual(first.values, [])
        XCTAssertEqual(second.values, [1])
        count.removeObserver()
    }

    func testReplacingDropsTheCallsQueuedForTheReplacedObserver() {
        let count = Observable(value: 0)
        let first = Received<Int>()
        let second = Received<Int>()
        count.addObserver(fireNow: false) { first.append($0) }
        count.value = 1  // queued for `first`, not run yet
        count.addObserver(fireNow: false) { second.append($0) }
        count.value = 2
        flushMainQueue()
        XCTAssertEqual(first.values, [])
        XCTAssertEqual(second.values, [2])
        count.removeObserver()
    }

    func testAddObserverNilRemovesTheObserver() {
        let count = Observable(value: 0)
        let seen = Received<Int>()
        count.addObserver(fireNow: false) { seen.append($0) }
        count.addObserver(nil)
        XCTAssertEqual(count.observersCount, 0)
        count.value = 1
        flushMainQueue()
        XCTAssertEqual(seen.values, [])
    }

    func testRemoveObserverDropsQueuedCallsAndLeavesOtherSubscriptions() {
        let count = Observable(value: 0)
        let label = Label()
        let recipe = Received<Int>()
        let closure = Received<Int>()
        count.bind(label) { label, value in label.texts.append("\(value)") }
        let token = count.subscribe { closure.append($0) }
        count.addObserver(fireNow: false) { recipe.append($0) }
        XCTAssertEqual(count.observersCount, 3)
        count.value = 1  // its recipe call is queued on the main queue
        count.removeObserver()
        count.value = 2
        flushMainQueue()
        XCTAssertEqual(recipe.values, [], "a queued call that had not started is dropped")
        XCTAssertEqual(label.texts.values, ["1", "2"])
        XCTAssertEqual(closure.values, [1, 2])
        XCTAssertEqual(count.observersCount, 2)
        token.cancel()
    }

    func testRemoveObserverWithoutAnObserverIsANoOp() {
        let count = Observable(value: 0)
        count.removeObserver()
        count.removeObserver()
        XCTAssertEqual(count.observersCount, 0)
        let other = Observable(value: 0)
        let seen = Received<Int>()
        other.addObserver(fireNow: false) { seen.append($0) }
        count.removeObserver()  // another value's observer is not this one's
        other.value = 1
        flushMainQueue()
        XCTAssertEqual(seen.values, [1])
        other.removeObserver()
    }

    func testUnbindAllAndUnsubscribeAllRemoveTheObserverToo() {
        let count = Observable(value: 0)
        let seen = Received<Int>()
        count.addObserver(fireNow: false) { seen.append($0) }
        XCTAssertEqual(count.unbindAll(), 1)
        count.addObserver(fireNow: false) { seen.append($0) }
        XCTAssertEqual(count.unsubscribeAll(), 1)
        count.value = 1
        flushMainQueue()
        XCTAssertEqual(seen.values, [])
    }

    func testTheObserverMaySetTheValueAndReplaceItselfFromItsCalls() {
        let count = Observable(value: 0)
        let first = Received<Int>()
        let second = Received<Int>()
        count.addObserver { value in
            first.append(value)
            if value == 0 { count.value = 1 }  // from the fireNow call
            if value == 1 { count.addObserver(fireNow: false) { second.append($0) } }  // from the main queue
        }
        XCTAssertEqual(first.values, [0])
        flushMainQueue()
        XCTAssertEqual(first.values, [0, 1])
        count.value = 2
        flushMainQueue()
        XCTAssertEqual(first.values, [0, 1])
        XCTAssertEqual(second.values, [2])
        XCTAssertEqual(count.observersCount, 1)
        count.removeObserver()
    }

    func testSetsFromOtherThreadsReachTheObserverOnTheMainQueueInOrder() {
        let count = Observable(value: 0)
        let calls = Received<Call>()
        count.addObserver(fireNow: false) { calls.append(Call(value: $0, onMainThread: Thread.isMainThread)) }
        let sets = 2_000
        let setters = (0..<2).map { half in
            JoinableThread {
                for index in 0..<sets / 2 { count.value = half * sets + index }
            }
        }
        for setter in setters { setter.join() }
        runMainLoop { calls.count == sets }
        flushMainQueue()
        let received = calls.values
        XCTAssertEqual(received.count, sets, "every set is delivered once")
        XCTAssertTrue(received.allSatisfy(\.onMainThread))
        for half in 0..<2 {
            let values = received.map(\.value).filter { $0 / sets == half }
            XCTAssertEqual(values, (0..<sets / 2).map { half * sets + $0 }, "each setter's values in its order")
        }
        count.removeObserver()
    }

    func testConcurrentAddObserverCallsLeaveExactlyOneObserver() {
        let count = Observable(value: 0)
        let calls = Received<Int>()
        let rounds = 2_000
        var roundsWithOtherCounts = 0
        for round in 0..<rounds {
            // Four calls at once, each removing the observer and adding its own.
            DispatchQueue.concurrentPerform(iterations: 4) { caller in
                count.addObserver(fireNow: false) { _ in calls.append(round * 4 + caller) }
            }
            if count.observersCount != 1 { roundsWithOtherCounts += 1 }
        }
        XCTAssertEqual(roundsWithOtherCounts, 0, "rounds that did not end with one observer, of \(rounds)")
        flushMainQueue()
        XCTAssertEqual(calls.values, [], "nothing was set")
        count.value = 1
        flushMainQueue()
        XCTAssertEqual(calls.count, 1, "one observer called once")
        XCTAssertEqual(calls.values.first.map { $0 / 4 }, rounds - 1, "the observer is one of the last round's")
        count.removeObserver()
        XCTAssertEqual(count.observersCount, 0)
    }
}

/// Written only from `ObservableRecipeTests.setUp()` (XCTest's one test
/// thread), never read.
nonisolated(unsafe) private weak var pinnedRecipeMarker: RecipeObserver?
