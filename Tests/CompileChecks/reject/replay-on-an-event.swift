// expect-error: extraneous argument label 'replay:' in call
// No subscribe form takes `replay:`; a value replays through
// `value.replaying`, and an Event, which has no current value, has neither.
import ObserverSwift

let event = Event<Int>()
let token = event.subscribe(replay: true) { value in print(value) }
