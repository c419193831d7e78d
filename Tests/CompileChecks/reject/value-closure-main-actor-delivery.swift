// expect-error: 'mainActor' is unavailable: main-actor delivery follows the handler's isolation: leave delivery: out
// ObservableValue: the same rule as Event.
import ObserverSwift

let progress = ObservableValue(0.0)
let token = progress.subscribe(delivery: .mainActor) { fraction in print(fraction) }
token.cancel()
