// expect-error: value of type 'Event<Int>' has no member 'replaying'
// Only an ObservableValue has a current value to replay.
import ObserverSwift

let event = Event<Int>()
let token = event.replaying.subscribe { value in print(value) }
