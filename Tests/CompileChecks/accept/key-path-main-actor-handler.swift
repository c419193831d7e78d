// A key-path observer runs on the main actor by marking its handler
// @MainActor, and may then touch main-actor state; `delivery:` places a
// @Sendable handler on the writing thread or on a queue.
import Dispatch
import ObserverSwift

final class Player: KeyPathObservable {
    @ObservableProperty var score = 0
}

@MainActor
final class ScoreView {
    var label = ""
    var observers: [KeyPathObserver] = []

    func start(_ player: Player) {
        observers.append(player.observe(\.$score) { @MainActor _, new in self.label = "\(new)" })
        observers.append(player.observe(\.$score, activate: false) { @MainActor old, _ in self.label = "\(old)" })
        let log = DispatchQueue(label: "log")
        observers.append(player.observe(\.$score, delivery: .queue(log)) { old, new in print(old, "->", new) })
        observers.append(player.observe(\.$score, delivery: .synchronous) { _, new in print(new) })
        observers.append(player.observe(\.$score) { old, new in print(old, new) })
    }
}
