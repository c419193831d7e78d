// Flowduino's README setter: `withObservers` is non-escaping, so the body may
// use `self` implicitly (`_foo`), in Swift 6 mode too.
import ObserverSwiftCompat

protocol DummyObserver: AnyObject {
    func onFooChanged(oldValue: String, newValue: String)
}

class Dummy: ObservableClass {
    private var _foo: String = "Hello"
    public var foo: String {
        get {
            return _foo
        }
        set {
            withObservers { (observer: DummyObserver) in
                observer.onFooChanged(oldValue: _foo, newValue: newValue)
            }
            _foo = newValue
        }
    }
}
