// Top-level code runs on the main actor: a handler written there may mutate
// a top-level variable, and runs on the main actor.
import ObserverSwift

let numbers = Event<Int>()
var seen: [Int] = []
let token = numbers.subscribe { n in seen.append(n) }
numbers.send(1)
token.cancel()
