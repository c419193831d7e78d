// expect-error: main actor-isolated property 'label' can not be mutated from a Sendable closure
// An unmarked key-path handler runs on the writing thread, not on the main actor.
import ObserverSwift

final class Player: KeyPathObservable {
    @ObservableProperty var score = 0
}

@MainActor
final class ScoreView {
    var label = ""
    var observer: KeyPathObserver?

    func start(_ player: Player) {
        observer = player.observe(\.$score) { _, new in self.label = "\(new)" }
    }
}
