// expect-error: 'mainActor' is unavailable: mark the closure instead: subscribe { @MainActor value in ... }
// A key-path observer's @Sendable handler cannot touch main-actor state
// wherever it runs: a handler runs on the main actor by being marked
// @MainActor, not by a delivery.
import ObserverSwift

final class Player: KeyPathObservable {
    @ObservableProperty var score = 0
}

let player = Player()
let observer = player.observe(\.$score, delivery: .mainActor) { old, new in print(old, new) }
observer.deactivate()
