// expect-error: 'mainActor' is unavailable: main-actor delivery follows the handler's isolation: leave delivery: out
// KeyedEvent: the same rule as Event.
import ObserverSwift

let prices = KeyedEvent<String, Double>()
let token = prices.subscribe(key: "AAPL", delivery: .mainActor) { price in print(price) }
token.cancel()
