/// A base class whose instances can be observed through protocols
/// (Flowduino's `ObservableClass`): subclass it, define an observer
/// protocol, and call ``ProtocolObservable/withObservers(_:)`` wherever
/// observers should hear about a change.
///
/// ```swift
/// protocol DummyObserver: AnyObject {
///     func onFooChanged(oldValue: String, newValue: String)
/// }
/// class Dummy: ObservableClass {
///     private var _foo = "Hello"
///     var foo: String {
///         get { _foo }
///         set {
///             withObservers { (observer: DummyObserver) in
///                 observer.onFooChanged(oldValue: self._foo, newValue: newValue)
///             }
///             _foo = newValue
///         }
///     }
/// }
/// let dummy = Dummy()
/// dummy.addObserver(someDummyObserver)   // held weakly
/// dummy.foo = "Test 1"                   // calls onFooChanged
/// ```
///
/// Every method is thread-safe (so ObserverSwiftCompat's `ObservableThreadSafeClass` is the
/// same class); see ``ObserverRegistry`` for the exact guarantees. Classes
/// that cannot inherit hold an ``ObserverRegistry`` and adopt
/// ``ProtocolObservable`` instead.
open class ObservableClass: ProtocolObservable {
    /// The registry holding this object's observers.
    public let observerRegistry = ObserverRegistry()

    /// Creates an observable with no observers. Not `required` (as in Flowduino): a
    /// subclass overrides it with `override init()` or declares its own.
    public init() {}
}
