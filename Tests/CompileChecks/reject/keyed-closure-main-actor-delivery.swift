// expect-error: 'mainActor' is unavailable: mark the closure instead
// KeyedEvent: the same one way to the main actor as Event.
import ObserverSwift

let prices = KeyedEvent<String, Double>()
let token = prices.subscribe(key: "AAPL", delivery: .mainActor) { price in print(price) }
token.cancel()
