// expect-error: result of call to 'subscribe(limit:fileID:line:_:)' is unused
// warnings-as-errors
// Nothing ends a closure subscription but its token (or its limit): dropping
// the token without `_ =` is flagged
// (a warning; this check compiles with warnings as errors).
import ObserverSwift

func listen(_ event: Event<Int>) {
    event.subscribe { print($0) }
}
