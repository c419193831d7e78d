// expect-error: 'mainActor' is unavailable: main-actor delivery follows the handler's isolation: leave delivery: out
// Running on the main actor is not a delivery: it follows the handler's
// isolation, and the message says what to write instead.
import ObserverSwift

let downloads = Event<Int>()
let token = downloads.subscribe(delivery: .mainActor) { bytes in print(bytes) }
token.cancel()
