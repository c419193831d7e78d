import Dispatch
import Foundation
import ObserverSwiftTesting
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// An actor subscription whose `cancel()` returned true delivers nothing
/// more, also of what waits in its mailbox, with every buffering policy and
/// with or without `limit:`; a limit stays exact.
final class ActorCancelTests: XCTestCase {
    /// One kind's actor subscription of `Int`s; `replayed` is the value a
    /// replaying form delivers first (nil: the form does not replay).
    struct Form {
        let name: String
        let replayed: Int?
        let subscribe: (BufferedRecorder, Int?, ObserverBufferingPolicy) -> Subscription
        let send: (Int) -> Void
    }

    /// Fresh sources for each call.
    func forms() -> [Form] {
        let event = Event<Int>()
        let keyed = KeyedEvent<String, Int>()
        let value = ObservableValue(0)
        let replayed = ObservableValue(0)
        return [
            Form(
                name: "Event", replayed: nil,
                subscribe: { recorder, limit, policy in
                    event.subscribe(isolatedTo: recorder, limit: limit, bufferingPolicy: policy) { $0.record($1) }
                },
                send: { event.send($0) }),
            Form(
                name: "KeyedEvent", replayed: nil,
                subscribe: { recorder, limit, policy in
                    keyed.subscribe(isolatedTo: recorder, key: "k", limit: limit, bufferingPolicy: policy) {
                        $0.record($1)
                    }
                },
                send: { keyed.send($0, forKey: "k") }),
            Form(
                name: "ObservableValue", replayed: nil,
                subscribe: { recorder, limit, policy in
                    value.subscribe(isolatedTo: recorder, limit: limit, bufferingPolicy: policy) { $0.record($1) }
                },
                send: { value.value = $0 }),
            Form(
                name: "ObservableValue replaying", replayed: 0,
                subscribe: { recorder, limit, policy in
                    replayed.replaying.subscribe(isolatedTo: recorder, limit: limit, bufferingPolicy: policy) {
                        $0.record($1)
                    }
                },
                send: { replayed.value = $0 }),
        ]
    }

    static let policies: [ObserverBufferingPolicy] = [.unbounded, .bufferingNewest(3), .bufferingOldest(3)]

    static func label(_ name: String, _ policy: ObserverBufferingPolicy, _ limit: Int?, _ sends: Int) -> String {
        "\(name), \(spelling(policy)), limit \(limit.map(String.init) ?? "none"), \(sends) sends"
    }

    /// `policy` as it is spelled.
    static func spelling(_ policy: ObserverBufferingPolicy) -> String {
        switch policy.kind {
        case .unbounded: return ".unbounded"
        case .newest(let capacity): return ".bufferingNewest(\(capacity))"
        case .oldest(let capacity): return ".bufferingOldest(\(capacity))"
        }
    }

    /// Keeps `recorder` busy until the returned semaphore is signalled.
    func occupy(_ recorder: BufferedRecorder) -> DispatchSemaphore {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Task { await recorder.occupy(entered: entered, release: release) }
        XCTAssertEqual(entered.wait(timeout: .now() + 10), .success, "the actor is busy")
        return release
    }

    /// What `recorder` received once every actor delivery queued so far has
    /// run and no actor mailbox holds anything (`settleDeliveries`, 10 s at
    /// most).
    func received(by recorder: BufferedRecorder) -> [Int] {
        let result = Locked<(numbers: [Int], failure: String?)>(([], nil))
        let done = DispatchSemaphore(value: 0)
        Task {
            var failure: String?
            do { try await settleDeliveries(timeout: .seconds(10)) } catch { failure = "\(error)" }
            let numbers = await recorder.numbers
            result.withLock { $0 = (numbers, failure) }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "reading the recorder")
        let (numbers, failure) = result.withLock { $0 }
        XCTAssertNil(failure, "the mailboxes drained")
        XCTAssertEqual(ObserverCore.statistics.queuedActorDeliveries, 0, "the mailboxes drained")
        return numbers
    }

    /// What the subscription delivers when it is not cancelled: the values
    /// it receives are `replayed` (if any) then `1...sends`, to a busy actor.
    func expectedWithoutCancel(
        replayed: Int?, sends: Int, limit: Int?, policy: ObserverBufferingPolicy
    ) -> [Int] {
        let received = (replayed.map { [$0] } ?? []) + Array(1...sends)
        let kept: [Int]
        switch policy {
        case .bufferingNewest(3): kept = Array(received.suffix(3))
        case .bufferingOldest(3): kept = Array(received.prefix(3))
        default: kept = received
        }
        return Array(kept.prefix(limit ?? Int.max))
    }

    /// The cases of the report: a busy actor, a subscription, `sends`
    /// values, `cancel()` returning true, then the actor released: nothing is
    /// delivered. When `cancel()` returns false (a limit counted as values
    /// are kept already ended the subscription), what the limit took is
    /// delivered, and only that.
    func testCancelThatReturnedTrueDeliversNothingOfWhatWaits() {
        for policy in Self.policies {
            for limit in [nil, 1, 2, 3] as [Int?] {
                for sends in [1, 3, 5] {
                    for form in forms() {
                        let label = Self.label(form.name, policy, limit, sends)
                        let recorder = BufferedRecorder()
                        let release = occupy(recorder)
                        let token = form.subscribe(recorder, limit, policy)
                        for number in 1...sends { form.send(number) }
                        let cancelled = token.cancel()
                        release.signal()
                        let numbers = received(by: recorder)
                        if cancelled {
                            XCTAssertEqual(numbers, [], "\(label): delivered after cancel() returned true")
                        } else {
                            XCTAssertEqual(
                                numbers,
                                expectedWithoutCancel(
                                    replayed: form.replayed, sends: sends, limit: limit, policy: policy),
                                "\(label): cancel() returned false")
                        }
                        // Only a limit counted as values are kept can end the
                        // subscription before the actor runs.
                        let received = (form.replayed == nil ? 0 : 1) + sends
                        let keptBeforeCancel = policy == .bufferingOldest(3) ? min(received, 3) : received
                        let limitEndedIt =
                            policy != .bufferingNewest(3) && limit.map { $0 <= keptBeforeCancel } ?? false
                        XCTAssertEqual(cancelled, !limitEndedIt, "\(label): cancel() returned \(cancelled)")
                    }
                }
            }
        }
    }

    /// The same subscriptions not cancelled deliver what the limit and the
    /// policy promise.
    func testWithoutCancelTheLimitIsExact() {
        for policy in Self.policies {
            for limit in [nil, 1, 2, 3] as [Int?] {
                for sends in [1, 3, 5] {
                    for form in forms() {
                        let label = Self.label(form.name, policy, limit, sends)
                        let recorder = BufferedRecorder()
                        let release = occupy(recorder)
                        let token = form.subscribe(recorder, limit, policy)
                        for number in 1...sends { form.send(number) }
                        release.signal()
                        let numbers = received(by: recorder)
                        XCTAssertEqual(
                            numbers,
                            expectedWithoutCancel(replayed: form.replayed, sends: sends, limit: limit, policy: policy),
                            label)
                        token.cancel()
                    }
                }
            }
        }
    }

    // MARK: Under concurrent senders

    /// What one stressed subscription delivered, and whether any delivery
    /// started after its `cancel()` had returned true and every delivery in
    /// flight then had finished.
    final class Ledger: Sendable {
        private struct State {
            var delivered: [Int] = []
            var cancelReturnedTrue = false
            var afterCancel = 0
        }
        private let state = Locked(State())

        func record(_ value: Int) {
            state.withLock { state in
                if state.cancelReturnedTrue { state.afterCancel += 1 }
                state.delivered.append(value)
            }
        }

        func cancelReturnedTrue() { state.withLock { $0.cancelReturnedTrue = true } }
        var delivered: [Int] { state.withLock { $0.delivered } }
        var afterCancel: Int { state.withLock { $0.afterCancel } }
    }

    /// Three senders and a canceller that cancels at a random moment (or,
    /// one round in four, not at all), with a random policy and limit.
    /// Checked in every round: nothing is delivered after `cancel()`
    /// returned true (and `waitForDeliveriesInFlight()` after it); never more
    /// than `limit`; exactly `limit` when the limit ended the subscription
    /// (not cancelled, enough values sent, or `cancel()` returned false);
    /// every value sent at most once, in each sender's order.
    func testConcurrentSendersAndCancelKeepTheLimitAndTheCancel() throws {
        let rounds = ReliabilityEnvironment.integer("OBSERVER_ACTOR_CANCEL_ROUNDS", default: 500)
        let seed = ReliabilityEnvironment.modelSeed ?? UInt64(DispatchTime.now().uptimeNanoseconds)
        var generator = SplitMix64(seed: seed)
        let senders = 3
        let sendsPerSender = 300
        let policies: [ObserverBufferingPolicy] = [
            .unbounded, .bufferingNewest(1), .bufferingNewest(3), .bufferingOldest(1), .bufferingOldest(3),
        ]
        let limits: [Int?] = [nil, 1, 2, 5, 40]
        for round in 0..<rounds {
            let policy = policies[Int(generator.next() % UInt64(policies.count))]
            let limit = limits[Int(generator.next() % UInt64(limits.count))]
            let cancels = generator.next() % 4 != 0
            let cancelDelay = generator.next() % 400
            let replays = generator.next() % 2 == 0
            let label =
                "seed \(seed) round \(round): \(Self.spelling(policy)), limit \(limit.map(String.init) ?? "none"), "
                + "\(cancels ? "cancelled after \(cancelDelay) µs" : "not cancelled"), \(replays ? "replaying" : "Event")"

            let recorder = BufferedRecorder()
            let ledger = Ledger()
            let event = Event<Int>()
            let value = ObservableValue(0)
            let send: @Sendable (Int) -> Void
            let token: Subscription
            if replays {
                send = { value.value = $0 }
                token = value.replaying.subscribe(isolatedTo: recorder, limit: limit, bufferingPolicy: policy) {
                    _, number in ledger.record(number)
                }
            } else {
                send = { event.send($0) }
                token = event.subscribe(isolatedTo: recorder, limit: limit, bufferingPolicy: policy) { _, number in
                    ledger.record(number)
                }
            }
            let cancelResult = Locked<Bool?>(nil)
            DispatchQueue.concurrentPerform(iterations: senders + 1) { index in
                if index == senders {
                    guard cancels else { return }
                    let until = DispatchTime.now().uptimeNanoseconds + cancelDelay * 1_000
                    while DispatchTime.now().uptimeNanoseconds < until {}
                    let cancelled = token.cancel()
                    cancelResult.withLock { $0 = cancelled }
                    // Deliveries that had passed their check may still run
                    // until this returns; none may start afterwards.
                    try? ObserverCore.waitForDeliveriesInFlight()
                    if cancelled { ledger.cancelReturnedTrue() }
                    return
                }
                for number in 1...sendsPerSender { send((index + 1) * 1_000_000 + number) }
            }
            if !cancels, limit != nil {
                // Enough values for the limit, whatever the policy dropped.
                let deadline = DispatchTime.now() + 10
                var number = 0
                while token.isActive, DispatchTime.now() < deadline {
                    number += 1
                    send(9_000_000 + number)
                    // Its delivery (or its drop) has happened before the next send.
                    _ = received(by: recorder)
                }
                XCTAssertFalse(token.isActive, "\(label): the limit ended the subscription")
            }
            // The recorder records nothing itself: reading it only waits
            // for the actor's last job.
            _ = received(by: recorder)
            let delivered = ledger.delivered
            XCTAssertEqual(ledger.afterCancel, 0, "\(label): delivered after cancel() returned true")
            if let limit {
                XCTAssertLessThanOrEqual(delivered.count, limit, label)
                if !cancels || cancelResult.withLock({ $0 }) == false {
                    XCTAssertEqual(delivered.count, limit, "\(label): the limit is exact")
                }
            } else if !cancels, policy == .unbounded {
                XCTAssertEqual(delivered.count, senders * sendsPerSender + (replays ? 1 : 0), label)
            }
            XCTAssertEqual(Set(delivered).count, delivered.count, "\(label): a value delivered twice")
            for sender in 1...senders {
                let own = delivered.filter { $0 / 1_000_000 == sender }
                XCTAssertEqual(own, own.sorted(), "\(label): sender \(sender)'s order")
            }
            token.cancel()
        }
    }
}
