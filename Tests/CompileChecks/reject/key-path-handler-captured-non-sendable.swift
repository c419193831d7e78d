// expect-error: capture of 'history' with non-Sendable type 'History' in a '@Sendable' closure
// Key-path observers run on the writing thread.
import ObserverSwift

final class Player: KeyPathObservable {
    @ObservableProperty var score = 0
}

final class History {
    var scores: [Int] = []
}

func track(_ player: Player, into history: History) -> KeyPathObserver {
    player.observe(\.$score) { _, new in history.scores.append(new) }
}
