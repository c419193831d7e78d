// expect-error: reference to captured var 'score' in concurrently-executing code
// dispatchToObservers' body escapes to other queues.
import ObserverSwift

protocol ScoreObserver: AnyObject {
    func scoreChanged(to score: Int)
}

final class Game: Sendable {
    let observers = ObserverRegistry()
    func finish() {
        var score = 10
        score += 1
        observers.dispatchToObservers { (observer: ScoreObserver) in observer.scoreChanged(to: score) }
    }
}
