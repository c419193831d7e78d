// expect-error: sending value of non-Sendable type '() async -> ()' risks causing data races
// Two detached tasks adding to one captured `var` race: Swift 6 rejects it
// (a region-based diagnostic: a SIL pass reports it, -typecheck does not).
import ObserverSwift

func count(_ ticks: Event<Int>) {
    var total = 0
    Task.detached { total += 1 }
    Task.detached { total += 1 }
    ticks.send(total)
}
