import Dispatch
import Foundation
import ObserverSwift

/// What a program of each shape checks about main-actor delivery: a send on
/// the main actor runs `@MainActor` handlers before it returns, a send from
/// another thread runs them later on the main actor, and value observers
/// see sets in set order. Wherever the main actor runs: on Linux, after a
/// top-level `await` or in `dispatchMain()`, the main queue is drained on a
/// thread other than the main thread.
@MainActor
public final class MainActorChecks {
    private let event = Event<Int>()
    private let number = ObservableValue(0)
    private let shown = Shown()
    private var received: [Int] = []
    private var onMainQueue: [Bool] = []
    private var added: [Int] = []
    private var failures = 0
    private var tokens: [Subscription] = []
    private static let mainQueueKey = DispatchSpecificKey<Bool>()

    final class Shown: Sendable {
        let text = LockedText()
    }

    final class LockedText: @unchecked Sendable {
        // @unchecked: `lock` guards `value`.
        private let lock = NSLock()
        private var value = ""
        var current: String {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
        func set(_ text: String) {
            lock.lock()
            value = text
            lock.unlock()
        }
    }

    public init() {
        DispatchQueue.main.setSpecific(key: Self.mainQueueKey, value: true)
    }

    private func expect(_ condition: Bool, _ what: String) {
        print(condition ? "ok:" : "FAILED:", what)
        if !condition { failures += 1 }
    }

    /// The first half, on the main actor: returns with deliveries queued for
    /// the main actor, which `finish()` checks once they have run.
    public func start(shape: String) {
        print("shape:", shape, "main thread:", Thread.isMainThread)
        tokens.append(
            event.subscribe { @MainActor [self] value in
                received.append(value)
                onMainQueue.append(DispatchQueue.getSpecific(key: Self.mainQueueKey) == true)
            })
        tokens.append(number.subscribe { @MainActor [self] value in added.append(value) })
        number.subscribe(shown) { @MainActor shown, value in shown.text.set("\(value)") }

        event.send(1)
        expect(received == [1], "a send on the main actor ran the @MainActor handler before it returned")

        let event = event
        let number = number
        let done = DispatchSemaphore(value: 0)
        Thread {
            event.send(2)
            number.value = 1
            done.signal()
        }.start()
        done.wait()
        expect(received == [1], "a send from another thread is enqueued on the main actor")
        number.value = 2
        expect(added.isEmpty, "a set on the main actor does not overtake one still queued")
    }

    /// The second half, after the main queue has run what `start` queued.
    /// Returns the process's exit status.
    public func finish() -> Int32 {
        expect(received == [1, 2], "every value, in send order (got \(received))")
        expect(onMainQueue.allSatisfy { $0 }, "every @MainActor handler ran on the main queue")
        expect(added == [1, 2], "value observers saw the sets in set order (got \(added))")
        expect(shown.text.current == "\(number.value)", "the bound label shows the current value")
        event.send(3)
        expect(received == [1, 2, 3], "with nothing queued, a send on the main actor runs the handler at once")
        tokens.forEach { $0.cancel() }
        print(failures == 0 ? "main-actor checks passed" : "main-actor checks: \(failures) failed")
        return failures == 0 ? 0 : 1
    }
}
