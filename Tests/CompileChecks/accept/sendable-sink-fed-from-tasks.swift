// A Sendable sink (only `let`s, its state behind a Mutex) as a weak target,
// with two tasks sending at once: nothing here can race, and Swift 6 accepts it.
import ObserverSwift
import Synchronization

final class Totals: Sendable {
    let sum = Mutex(0)
}

func feed(_ numbers: Event<Int>, into totals: Totals) async {
    numbers.subscribe(totals) { totals, value in
        totals.sum.withLock { $0 += value }
    }
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<2 {
            group.addTask {
                for value in 1...100 { numbers.send(value) }
            }
        }
    }
}
