// The observer the ObservableClass example adds (its protocol is the
// example's own).
final class DummyPrinter: DummyObserver, Sendable {
    func onFooChanged(oldValue: String, newValue: String) { print(oldValue, newValue) }
}
let someDummyObserver = DummyPrinter()
// fragment
