// expect-error: does not conform to the 'Sendable' protocol
// Protocol-typed observers are called on the thread that calls withObservers.
import ObserverSwift

protocol ScoreObserver: AnyObject {
    func scoreChanged(to score: Int)
}

final class Scoreboard: ScoreObserver {
    var shown: [Int] = []
    func scoreChanged(to score: Int) { shown.append(score) }
}

final class Game: Sendable {
    let observers = ObserverRegistry()
}

func connect(_ game: Game, _ board: Scoreboard) {
    game.observers.addObserver(board)
}
