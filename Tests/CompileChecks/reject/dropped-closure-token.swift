// expect-error: result of call to 'subscribe' is unused
// Nothing ends a closure subscription but its token: dropping it is flagged
// (a warning, made an error by the compile checks' -warnings-as-errors).
import ObserverSwift

func listen(_ event: Event<Int>) {
    event.subscribe { print($0) }
}
