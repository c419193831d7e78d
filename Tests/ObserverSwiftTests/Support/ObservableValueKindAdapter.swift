import Dispatch
import Foundation
@_spi(EngineDiagnostics) import ObserverSwift
import ObserverTestSupport
import XCTest

/// `ObservableValue<Int>` as a reliability-test observer kind: a send sets
/// the value.
///
/// Subscriptions alternate between `subscribe` and `subscribe(replay: true)`
/// (closures and targets alike), so that every row runs over both. A
/// replaying subscription gets the current value once, inside `subscribe`
/// and before any set can reach it: the source checks that (the first call,
/// made before `subscribe` returns) and its value (inside a handler of this
/// value, the value of the round that handler runs in; elsewhere, with no set
/// under way, the value last set), fails the test if either is wrong, and
/// hides that one call from the handler. So "a subscription added during a
/// send is not called by it" means the same for this kind as for the others,
/// and the replay path runs through every row.
struct ObservableValueKindAdapter: ReliabilityObserverKind {
    var name: String { "ObservableValue" }
    func makeSource() -> any ReliabilitySource { ObservableValueReliabilitySource() }
}

final class ObservableValueReliabilitySource: ReliabilitySource {
    let value = ObservableValue(0)
    /// Which round each thread's handlers run in. Held by the handlers, not
    /// by the source: a handler that held the source would keep the value
    /// alive.
    private let rounds = ObservableValueRounds()
    /// Subscriptions made so far; every other one replays.
    private let made = SharedVariable(0)

    private func nextReplays() -> Bool {
        made.update { made in
            made += 1
            return made % 2 == 0
        }
    }

    func subscribe(_ handler: @escaping @Sendable (Int) -> Void) -> Subscription {
        let rounds = rounds
        guard nextReplays() else {
            return value.subscribe { value in rounds.deliver(value) { handler(value) } }
        }
        let quietSince = rounds.quietPoint
        let replay = rounds.expectReplay(current: value.value, quietSince: quietSince)
        let token = value.replaying.subscribe { value in
            if replay.isReplay(value) { return }
            rounds.deliver(value) { handler(value) }
        }
        replay.subscribeReturned()
        return token
    }

    var supportsTargets: Bool { true }

    func subscribe(target: ReliabilityTarget, _ handler: @escaping @Sendable (ReliabilityTarget, Int) -> Void)
        -> Subscription
    {
        let rounds = rounds
        guard nextReplays() else {
            return value.subscribe(target) { target, value in rounds.deliver(value) { handler(target, value) } }
        }
        let quietSince = rounds.quietPoint
        let replay = rounds.expectReplay(current: value.value, quietSince: quietSince)
        let token = value.replaying.subscribe(target) { target, value in
            if replay.isReplay(value) { return }
            rounds.deliver(value) { handler(target, value) }
        }
        replay.subscribeReturned()
        return token
    }

    func unsubscribe(target: ReliabilityTarget) -> Int { value.unsubscribe(target) }
    func unsubscribeAll() -> Int { value.unsubscribeAll() }

    func send(_ newValue: Int) {
        rounds.setStarted()
        value.value = newValue
        rounds.setEnded()
    }

    var subscribersCount: Int { value.subscribersCount }

    func subscribe(queue: DispatchQueue, _ handler: @escaping @Sendable (Int) -> Void) -> Subscription? {
        value.subscribe(delivery: .queue(queue), handler)
    }

    func replayThenWaitInsideThrows() -> Bool? {
        let threw = KeyedCounter()
        let token = value.replaying.subscribe { _ in
            // Inside the replay (before subscribe returns) or a later set.
            do { try ObserverCore.waitForDeliveriesInFlight() } catch { threw.increment() }
        }
        token.cancel()
        return threw.value > 0
    }
}

/// What an ``ObservableValueReliabilitySource`` knows of the sets under way:
/// the value each thread's synchronous handlers are running with, and how
/// many sets have started and ended.
final class ObservableValueRounds: Sendable {
    private struct State {
        /// Per thread, the values of the rounds its handlers are in, innermost last.
        var delivering: [ObjectIdentifier: [Int]] = [:]
        var setsStarted = 0
        var setsEnded = 0
    }

    private let state = SharedVariable(State())

    private static var thread: ObjectIdentifier { ObjectIdentifier(Thread.current) }

    func setStarted() { state.update { $0.setsStarted += 1 } }
    func setEnded() { state.update { $0.setsEnded += 1 } }

    /// Runs a handler for `value`, recording that this thread is in its round.
    func deliver(_ value: Int, _ handler: () -> Void) {
        let thread = Self.thread
        state.update { $0.delivering[thread, default: []].append(value) }
        handler()
        state.update { state in
            state.delivering[thread]?.removeLast()
            if state.delivering[thread]?.isEmpty == true { state.delivering[thread] = nil }
        }
    }

    /// The replay a replaying subscribe made now must deliver. `current`: the
    /// value read just before subscribing.
    /// The sets started so far, when none is under way; nil while one is.
    /// Taken before reading the value a replay is expected to deliver.
    var quietPoint: Int? {
        state.update { $0.setsStarted == $0.setsEnded ? $0.setsStarted : nil }
    }

    /// The replay a replaying subscribe made now must deliver. `current`: the
    /// value read just before subscribing, after `quietSince` (``quietPoint``)
    /// was taken.
    func expectReplay(current: Int, quietSince: Int?) -> ExpectedReplay {
        let thread = Self.thread
        return state.update { state in
            if let round = state.delivering[thread]?.last {
                // The turn is this thread's: the replay is the round's value
                // whatever other threads do.
                return ExpectedReplay(value: round, rounds: nil, setsStarted: state.setsStarted)
            }
            // Known only if no set ran from before the read of `current`
            // until the replay (checked again when it arrives): a set that
            // started and ended between the read and now would make
            // `current` an older value than the one the replay delivers.
            let quiet = quietSince == state.setsStarted && state.setsEnded == state.setsStarted
            return ExpectedReplay(value: quiet ? current : nil, rounds: self, setsStarted: state.setsStarted)
        }
    }

    /// Whether no set has started since `setsStarted` and none is under way.
    fileprivate func isQuiet(since setsStarted: Int) -> Bool {
        state.update { $0.setsStarted == setsStarted && $0.setsEnded == setsStarted }
    }
}

/// The replay one replaying subscribe must deliver: its first call, made
/// before `subscribe` returns, with the expected value where it is known.
final class ExpectedReplay: Sendable {
    private let value: Int?
    private let rounds: ObservableValueRounds?
    private let setsStarted: Int
    /// Calls so far, and whether `subscribe` has returned.
    private let calls = SharedVariable((count: 0, returned: false))

    init(value: Int?, rounds: ObservableValueRounds?, setsStarted: Int) {
        self.value = value
        self.rounds = rounds
        self.setsStarted = setsStarted
    }

    /// True for the first call (the replay, to be hidden from the handler);
    /// fails the test if that call is not the replay it must be.
    func isReplay(_ delivered: Int) -> Bool {
        let first = calls.update { calls -> (Bool, Bool) in
            calls.count += 1
            return (calls.count == 1, calls.returned)
        }
        guard first.0 else { return false }
        if first.1 { XCTFail("ObservableValue: the replay came after replaying.subscribe returned") }
        if let value, rounds?.isQuiet(since: setsStarted) ?? true, delivered != value {
            XCTFail("ObservableValue: replayed \(delivered), expected \(value)")
        }
        return true
    }

    func subscribeReturned() {
        let count = calls.update { calls -> Int in
            calls.returned = true
            return calls.count
        }
        if count == 0 { XCTFail("ObservableValue: replaying.subscribe returned without replaying") }
    }
}
