// expect-error: 'mainActor' is unavailable: mark the closure instead
// ObservableValue: the same one way to the main actor as Event.
import ObserverSwift

let progress = ObservableValue(0.0)
let token = progress.subscribe(delivery: .mainActor, replay: true) { fraction in print(fraction) }
token.cancel()
