// expect-error: has no member '$count'
// Key-path observation names the projected value of an @ObservableProperty;
// a plain stored property has none, so observing it does not compile.
import ObserverSwift

final class Counter: KeyPathObservable {
    var count = 0
}

func watch(_ counter: Counter) -> KeyPathObserver {
    counter.observe(\.$count) { old, new in print(old, new) }
}
