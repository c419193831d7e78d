// A handler that only touches Sendable state compiles, with its token kept.
import Foundation
import ObserverSwift

final class Tally: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var total = 0
    func add(_ value: Int) { lock.withLock { total += value } }
}

func start(_ event: Event<Int>, tally: Tally) -> Subscription {
    event.subscribe { value in tally.add(value) }
}

func startOnce(_ event: Event<Int>, tally: Tally) {
    // Ends by itself, but a closure's token is only ever dropped explicitly.
    _ = event.subscribe(limit: 1) { value in tally.add(value) }
}
