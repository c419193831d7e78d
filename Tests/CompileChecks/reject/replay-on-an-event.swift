// expect-error: cannot convert value of type 'Bool' to expected argument type 'Never'
// An Event has no current value: `replay:` takes no argument there.
import ObserverSwift

let event = Event<Int>()
let token = event.subscribe(replay: true) { value in print(value) }
