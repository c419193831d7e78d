// expect-error: reference to captured var 'score' in concurrently-executing code
// withObservers' body escapes: it runs on each observer's queue or on the main actor.
import ObserverSwift

protocol ScoreObserver: AnyObject {
    func scoreChanged(to score: Int)
}

final class Game: Sendable {
    let observers = ObserverRegistry()
    func finish() {
        var score = 10
        score += 1
        observers.withObservers { (observer: ScoreObserver) in observer.scoreChanged(to: score) }
    }
}
