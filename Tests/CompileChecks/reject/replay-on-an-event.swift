// expect-error: no exact matches in call to instance method 'subscribe'
// No subscribe form takes `replay:`; a value replays through
// `value.replaying`, and an Event, which has no current value, has neither.
import ObserverSwift

let event = Event<Int>()
let token = event.subscribe(replay: true) { value in print(value) }
