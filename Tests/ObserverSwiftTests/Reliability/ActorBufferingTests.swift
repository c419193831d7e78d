import Dispatch
import Foundation
import ObserverEngine
import ObserverSwiftTesting
import XCTest

@testable import ObserverSwift

/// A value whose live instances are counted, to see what a buffer keeps.
final class CountedValue: Sendable {
    static let live = HeapAtomicWord<Int>(0)
    static var liveCount: Int { live.load(ordering: .sequentiallyConsistent) }

    let number: Int

    init(_ number: Int) {
        self.number = number
        Self.live.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    deinit {
        Self.live.wrappingSubtract(1, ordering: .sequentiallyConsistent)
    }
}

/// An actor that records what it receives and can be kept busy.
actor BufferedRecorder {
    private(set) var numbers: [Int] = []

    func record(_ value: CountedValue) { numbers.append(value.number) }
    func record(_ number: Int) { numbers.append(number) }

    /// Occupies the actor until `release` is signalled; signals `entered` first.
    func occupy(entered: DispatchSemaphore, release: DispatchSemaphore) {
        entered.signal()
        _ = release.wait(timeout: .now() + 60)
    }
}

/// What an actor subscription's buffering policy keeps while the actor is
/// busy, and how it combines with `limit:`, for every kind that subscribes
/// an actor.
final class ActorBufferingTests: XCTestCase {
    /// One kind's actor subscription of `CountedValue`s (`limit` nil: none).
    struct CountedForm {
        let name: String
        let subscribe: (BufferedRecorder, ObserverBufferingPolicy) -> Subscription
        let send: (CountedValue) -> Void
    }

    func countedForms() -> [CountedForm] {
        let event = Event<CountedValue>()
        let keyed = KeyedEvent<String, CountedValue>()
        let value = ObservableValue(CountedValue(0))
        return [
            CountedForm(
                name: "Event",
                subscribe: { recorder, policy in
                    event.subscribe(isolatedTo: recorder, bufferingPolicy: policy) { $0.record($1) }
                },
                send: { event.send($0) }),
            CountedForm(
                name: "KeyedEvent",
                subscribe: { recorder, policy in
                    keyed.subscribe(isolatedTo: recorder, key: "k", bufferingPolicy: policy) { $0.record($1) }
                },
                send: { keyed.send($0, forKey: "k") }),
            CountedForm(
                name: "ObservableValue",
                subscribe: { recorder, policy in
                    value.subscribe(isolatedTo: recorder, bufferingPolicy: policy) { $0.record($1) }
                },
                send: { value.value = $0 }),
        ]
    }

    /// Keeps `recorder` busy until the returned semaphore is signalled.
    func occupy(_ recorder: BufferedRecorder) -> DispatchSemaphore {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Task { await recorder.occupy(entered: entered, release: release) }
        XCTAssertEqual(entered.wait(timeout: .now() + 10), .success, "the actor is busy")
        return release
    }

    /// The recorder's numbers once every actor delivery queued so far has
    /// run (`settleDeliveries`: no extra number can still arrive).
    func numbers(of recorder: BufferedRecorder) -> [Int] {
        let result = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        Task {
            try? await settleDeliveries()
            let numbers = await recorder.numbers
            result.withLock { $0 = numbers }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 30)
        return result.withLock { $0 }
    }

    // MARK: What a policy drops is released when it is dropped

    /// 300 000 sends of a class value to a busy actor with
    /// `.bufferingNewest(4)`: while the actor is still busy, at most the 4
    /// kept values (and the few the senders and the value hold) are alive.
    func testBufferingNewestReleasesWhatItDropsWhileTheActorIsBusy() {
        for form in countedForms() {
            let recorder = BufferedRecorder()
            let baseline = CountedValue.liveCount
            let token = form.subscribe(recorder, .bufferingNewest(4))
            let release = occupy(recorder)
            let queuedBefore = ObserverCore.statistics.queuedActorDeliveries
            for number in 1...300_000 { form.send(CountedValue(number)) }
            let alive = CountedValue.liveCount - baseline
            // Kept: 4 queued; the ObservableValue's two copies hold one more
            // (the other is the newest, also queued).
            XCTAssertLessThanOrEqual(alive, 4 + 2, "\(form.name): values alive while the actor is busy")
            XCTAssertEqual(ObserverCore.statistics.queuedActorDeliveries - queuedBefore, 4, form.name)
            release.signal()
            XCTAssertEqual(
                numbers(of: recorder), [299_997, 299_998, 299_999, 300_000], form.name)
            token.cancel()
        }
    }

    /// `.bufferingOldest(4)`: the values it refuses are never kept.
    func testBufferingOldestKeepsOnlyWhatItQueues() {
        for form in countedForms() {
            let recorder = BufferedRecorder()
            let baseline = CountedValue.liveCount
            let token = form.subscribe(recorder, .bufferingOldest(4))
            let release = occupy(recorder)
            for number in 1...100_000 { form.send(CountedValue(number)) }
            XCTAssertLessThanOrEqual(CountedValue.liveCount - baseline, 4 + 2, form.name)
            release.signal()
            XCTAssertEqual(numbers(of: recorder), [1, 2, 3, 4], form.name)
            token.cancel()
        }
    }

    /// The `values` sequence with `.bufferingNewest(4)` and a consumer that
    /// does not take anything: what it drops is released at once.
    func testValuesSequenceBufferingNewestReleasesWhatItDrops() {
        let event = Event<CountedValue>()
        let baseline = CountedValue.liveCount
        let values = event.values(bufferingPolicy: .bufferingNewest(4))
        for number in 1...100_000 { event.send(CountedValue(number)) }
        XCTAssertLessThanOrEqual(CountedValue.liveCount - baseline, 4)
        let taken = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        Task {
            var iterator = values.makeAsyncIterator()
            for _ in 0..<4 {
                if let next = await iterator.next() { taken.withLock { $0.append(next.number) } }
            }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(taken.withLock { $0 }, [99_997, 99_998, 99_999, 100_000])
    }

    // MARK: limit: and buffering

    /// One kind's actor subscription of `Int`s that takes a limit.
    struct LimitedForm {
        let name: String
        let subscribe: (BufferedRecorder, Int?, ObserverBufferingPolicy) -> Subscription
        let send: (Int) -> Void
        let count: () -> Int
    }

    func limitedForms() -> [LimitedForm] {
        let event = Event<Int>()
        let keyed = KeyedEvent<String, Int>()
        return [
            LimitedForm(
                name: "Event",
                subscribe: { recorder, limit, policy in
                    event.subscribe(isolatedTo: recorder, limit: limit, bufferingPolicy: policy) { $0.record($1) }
                },
                send: { event.send($0) }, count: { event.subscribersCount }),
            LimitedForm(
                name: "KeyedEvent",
                subscribe: { recorder, limit, policy in
                    keyed.subscribe(isolatedTo: recorder, key: "k", limit: limit, bufferingPolicy: policy) {
                        $0.record($1)
                    }
                },
                send: { keyed.send($0, forKey: "k") }, count: { keyed.subscribersCount(forKey: "k") }),
        ]
    }

    /// `limit: 10` with `.bufferingNewest(3)`: the limit counts handler
    /// calls, not values the policy dropped. Ten values in bursts of ten to
    /// a busy actor: each drain delivers the newest three, and the
    /// subscription ends after the tenth call.
    func testLimitCountsHandlerCallsNotValuesThePolicyDropped() {
        for form in limitedForms() {
            let recorder = BufferedRecorder()
            let token = form.subscribe(recorder, 10, .bufferingNewest(3))
            var expected: [Int] = []
            for burst in 0..<4 {
                let release = occupy(recorder)
                for number in (burst * 10 + 1)...(burst * 10 + 10) { form.send(number) }
                release.signal()
                let newest = Array((burst * 10 + 8)...(burst * 10 + 10))
                expected += newest.prefix(10 - expected.count)
                XCTAssertEqual(numbers(of: recorder), expected, "\(form.name), burst \(burst)")
            }
            XCTAssertEqual(expected.count, 10)
            XCTAssertFalse(token.isActive, form.name)
            XCTAssertEqual(form.count(), 0, form.name)
            form.send(1_000)
            XCTAssertEqual(numbers(of: recorder), expected, form.name)
        }
    }

    /// `.bufferingOldest(3)` with `limit: 5`: values refused by the policy
    /// are not counted either.
    func testLimitWithBufferingOldestCountsOnlyWhatIsQueued() {
        for form in limitedForms() {
            let recorder = BufferedRecorder()
            let token = form.subscribe(recorder, 5, .bufferingOldest(3))
            var release = occupy(recorder)
            for number in 1...10 { form.send(number) }
            release.signal()
            XCTAssertEqual(numbers(of: recorder), [1, 2, 3], form.name)
            release = occupy(recorder)
            for number in 11...20 { form.send(number) }
            release.signal()
            XCTAssertEqual(numbers(of: recorder), [1, 2, 3, 11, 12], form.name)
            XCTAssertFalse(token.isActive, form.name)
        }
    }

    /// `.unbounded` keeps "exactly the first n values sent", even when they
    /// all queue while the actor is busy, and keeps no more than n.
    func testLimitWithUnboundedBufferingIsTheFirstValuesSent() {
        for form in limitedForms() {
            let recorder = BufferedRecorder()
            let token = form.subscribe(recorder, 10, .unbounded)
            let release = occupy(recorder)
            let queuedBefore = ObserverCore.statistics.queuedActorDeliveries
            for number in 1...1_000 { form.send(number) }
            XCTAssertEqual(ObserverCore.statistics.queuedActorDeliveries - queuedBefore, 10, form.name)
            XCTAssertFalse(token.isActive, "\(form.name): the tenth value sent ended the subscription")
            release.signal()
            XCTAssertEqual(numbers(of: recorder), Array(1...10), form.name)
        }
    }
}
