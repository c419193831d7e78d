// expect-error: cannot convert value of type 'KeyPath<Counter, Int>'
// The wrapped value's key path (`\.count`) is not observable: only the
// projected one (`\.$count`), so the mistake is caught at compile time.
import ObserverSwift

final class Counter: KeyPathObservable {
    @ObservableProperty var count = 0
}

func watch(_ counter: Counter) -> KeyPathObserver {
    counter.observe(\.count) { old, new in print(old, new) }
}
