// expect-error: 'mainActor' is unavailable: mark the closure instead: subscribe { @MainActor value in ... }
// A plain @Sendable handler cannot touch main-actor state wherever it runs:
// a closure runs on the main actor by being marked @MainActor, not by a delivery.
import ObserverSwift

let downloads = Event<Int>()
let token = downloads.subscribe(delivery: .mainActor) { bytes in print(bytes) }
token.cancel()
