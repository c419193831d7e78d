import ObserverSwift

/// A base class whose instances can be observed by key and protocol
/// (Flowduino 2.x's `KeyedObservableClass`): subclass it, define an observer
/// protocol, and call ``KeyedProtocolObservable/withKeyedObservers(key:_:)``
/// where the observers of a key should hear about it. Plain observers work
/// too (``ProtocolObservable/addObserver(_:delivery:)->Bool``,
/// ``ProtocolObservable/withObservers(_:)``), inherited from
/// ``ObservableClass``; they are separate from the keyed ones.
///
/// <!-- snippet: fragment of SettingPrinter -->
/// ```swift
/// protocol SettingObserver: AnyObject {
///     func settingChanged(key: String, oldValue: String, newValue: String)
/// }
/// class Settings: KeyedObservableClass {
///     private var values = ["theme": "light", "language": "en"]
///     func set(_ key: String, to value: String) {
///         withKeyedObservers(key: key) { (key, observer: SettingObserver) in
///             observer.settingChanged(key: key, oldValue: self.values[key] ?? "", newValue: value)
///         }
///         values[key] = value
///     }
/// }
/// let settings = Settings()
/// settings.addKeyedObserver(keys: ["theme", "language"], someSettingObserver)  // held weakly
/// settings.set("theme", to: "dark")   // calls settingChanged(key: "theme", ...)
/// ```
///
/// The key type is inferred at each call (any `Hashable`). Every method is
/// thread-safe, so ObserverSwiftCompat's `KeyedObservableThreadSafeClass` is the same class;
/// see ``KeyedObserverRegistry`` for the exact guarantees. Classes that
/// cannot inherit hold a ``KeyedObserverRegistry`` and adopt
/// ``KeyedProtocolObservable`` instead.
open class KeyedObservableClass: ObservableClass, KeyedProtocolObservable {
    /// The registry holding this object's keyed observers.
    public let keyedObserverRegistry = KeyedObserverRegistry()

    /// Creates an observable with no observers. Not `required` (as in Flowduino): a
    /// subclass overrides it with `override init()` or declares its own.
    public override init() {
        super.init()
    }
}
