// expect-error: 'mainActor' is unavailable: main-actor delivery follows the handler's isolation: leave delivery: out
// A key-path observer's handler runs on the main actor by being marked
// @MainActor, not by a delivery.
import ObserverSwift

final class Player: KeyPathObservable {
    @ObservableProperty var score = 0
}

let player = Player()
let observer = player.observe(\.$score, delivery: .mainActor) { old, new in print(old, new) }
observer.deactivate()
