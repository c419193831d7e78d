import Dispatch
import ObserverEngine
import ObserverSwift

/// Records the values a source delivers, so that a test can wait for them
/// without sleeping and compare them.
///
/// ```swift
/// let saved = Event<Int>()
/// let recorder = saved.record()
/// saved.send(1)
/// saved.send(2)
/// print(recorder.values)   // [1, 2]
/// ```
///
/// A recorder made by `record()` subscribes on the sending thread: each
/// value is recorded before `send` returns, and the recorder's subscription
/// lasts until ``cancel()`` or until the recorder is deallocated. A recorder
/// made with ``init(_:)`` records what its owner passes to ``record(_:)``:
/// a recording observer for an ``ObserverRegistry``'s protocol calls.
///
/// Reading: ``values`` is everything recorded so far. ``next(timeout:)`` and
/// ``values(count:timeout:)`` read in order, each returning values the
/// previous reads did not (a cursor), and wait for them when they have not
/// arrived; ``expectNoMoreValues(within:)`` checks that nothing arrives
/// beyond that cursor. A failure throws an ``ObserverTestFailure`` naming
/// the source, what was expected and what arrived.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public final class Recorder<Value: Sendable>: Sendable {
    /// What it records, as failures name it (`Event<Int>`, or what ``init(_:)`` was given).
    public let source: String
    private let state = Locked(State())
    private let subscription = Locked<Subscription?>(nil)

    private struct State {
        var values: [Value] = []
        /// How many values the reads have returned.
        var cursor = 0
        var waiters: [Waiter] = []
        var nextWaiter = 0
    }

    private struct Waiter {
        let number: Int
        let count: Int
        let resume: @Sendable ([Value]) -> Void
    }

    /// A recorder of what its owner passes to ``record(_:)``, named `source`
    /// in failures: the recording observer of a protocol.
    ///
    /// ```swift
    /// protocol TemperatureObserver: AnyObject {
    ///     func temperatureChanged(to celsius: Double)
    /// }
    /// final class RecordingDisplay: TemperatureObserver, Sendable {
    ///     let temperatures = Recorder<Double>("TemperatureObserver.temperatureChanged")
    ///     func temperatureChanged(to celsius: Double) { temperatures.record(celsius) }
    /// }
    /// ```
    public init(_ source: String) {
        self.source = source
        ObserverCore.isTrackingSubscriptions = true
    }

    init(source: String, subscribe: (Recorder) -> Subscription) {
        self.source = source
        ObserverCore.isTrackingSubscriptions = true
        let made = subscribe(self)
        subscription.withLock { $0 = made }
    }

    deinit {
        subscription.withLock { $0 }?.cancel()
    }

    /// Ends the recorder's subscription (values already recorded stay).
    public func cancel() {
        subscription.withLock { $0 }?.cancel()
    }

    /// Records `value` and hands it to the reads waiting for it.
    public func record(_ value: Value) {
        let ready = state.withLock { state -> [(@Sendable ([Value]) -> Void, [Value])] in
            state.values.append(value)
            var ready: [(@Sendable ([Value]) -> Void, [Value])] = []
            while let first = state.waiters.first, state.values.count - state.cursor >= first.count {
                state.waiters.removeFirst()
                let taken = Array(state.values[state.cursor..<state.cursor + first.count])
                state.cursor += first.count
                ready.append((first.resume, taken))
            }
            return ready
        }
        for (resume, taken) in ready { resume(taken) }
    }

    /// Every value recorded so far, oldest first.
    public var values: [Value] { state.withLock { $0.values } }

    /// The next value no read has returned, waiting up to `timeout` for it.
    /// - Throws: ``ObserverTestFailure`` when none arrives in time.
    public func next(timeout: Duration = .seconds(5)) async throws -> Value {
        try await values(count: 1, timeout: timeout)[0]
    }

    /// The next `count` values no read has returned, waiting up to
    /// `timeout` for all of them.
    /// - Throws: ``ObserverTestFailure`` when fewer arrive in time: it names
    ///   the source, how many were expected and which values arrived.
    public func values(count: Int, timeout: Duration = .seconds(5)) async throws -> [Value] {
        guard count > 0 else { return [] }
        let deadline = Deadline(after: timeout)
        let result = Locked<[Value]>([])
        let number = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        try await wait(
            until: deadline,
            orFail: { [self] in
                let arrived = withdraw(number)
                return ObserverTestFailure(
                    "\(source): expected \(count) value\(count == 1 ? "" : "s") within \(timeout.text), "
                        + "\(arrived.count) arrived: \(arrived)")
            },
            start: { done in
                let ready = state.withLock { state -> Bool in
                    if state.waiters.isEmpty, state.values.count - state.cursor >= count {
                        let taken = Array(state.values[state.cursor..<state.cursor + count])
                        state.cursor += count
                        result.withLock { $0 = taken }
                        return true
                    }
                    state.waiters.append(
                        Waiter(number: number, count: count) { taken in
                            result.withLock { $0 = taken }
                            done()
                        })
                    return false
                }
                if ready { done() }
            })
        return result.withLock { $0 }
    }

    /// Removes waiter `number` (its read timed out); what arrived for it.
    private func withdraw(_ number: Int) -> [Value] {
        state.withLock { state in
            state.waiters.removeAll { $0.number == number }
            return Array(state.values[state.cursor...])
        }
    }

    /// Checks that no value beyond what the reads returned arrives within
    /// `duration` (this call waits that long when none does).
    /// - Throws: ``ObserverTestFailure`` naming the source and what arrived.
    public func expectNoMoreValues(within duration: Duration = .milliseconds(100)) async throws {
        let unread = state.withLock { Array($0.values[$0.cursor...]) }
        if !unread.isEmpty {
            throw ObserverTestFailure("\(source): expected no more values, \(unread.count) arrived: \(unread)")
        }
        do {
            _ = try await values(count: 1, timeout: duration)
        } catch is ObserverTestFailure {
            return
        }
        let arrived = state.withLock { Array($0.values[($0.cursor - 1)...]) }
        throw ObserverTestFailure(
            "\(source): expected no more values within \(duration.text), \(arrived.count) arrived: \(arrived)")
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension ObserverSource where Value: Sendable {
    /// A ``Recorder`` of every value this source sends from now on, on the
    /// sending thread. Its subscription is listed (and leak-checked) with
    /// the line of this call.
    ///
    /// ```swift
    /// let titles = ObservableValue("draft")
    /// let recorder = titles.record()
    /// titles.value = "final"
    /// print(recorder.values)   // ["final"]
    /// ```
    public func record(fileID: StaticString = #fileID, line: UInt = #line) -> Recorder<Value> {
        Recorder(source: SubscriptionTracking.displayName(of: Self.self)) { recorder in
            subscribe(trackedAt: fileID, line: line) { [weak recorder] value in recorder?.record(value) }
        }
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension KeyedEvent where Value: Sendable {
    /// A ``Recorder`` of every value sent for `key` from now on (a
    /// ``KeySelection`` records its key-value pairs with `record()`).
    public func record(key: Key, fileID: StaticString = #fileID, line: UInt = #line) -> Recorder<Value> {
        Recorder(source: "\(SubscriptionTracking.displayName(of: Self.self)) key \(key)") { recorder in
            subscribe(key: key, trackedAt: fileID, line: line) { [weak recorder] value in recorder?.record(value) }
        }
    }
}
