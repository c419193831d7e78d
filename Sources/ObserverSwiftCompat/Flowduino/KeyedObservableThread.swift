import ObserverSwift

/// An ``ObservableThread`` whose observers can also be registered under keys
/// (Flowduino 2.x's `KeyedObservableThread`): subclass it, override
/// ``ObservableThread/main()``, loop while
/// ``ObservableThread/isExecuting``, and call
/// ``KeyedProtocolObservable/withKeyedObservers(key:_:)``.
///
/// <!-- snippet: fragment of BoilerDisplay -->
/// ```swift
/// protocol SensorObserver: AnyObject {
///     func reading(sensor: String, value: Double)
/// }
/// class SensorPoller: KeyedObservableThread {
///     override func main() {
///         while isExecuting {
///             for sensor in ["boiler", "attic"] {
///                 let value = Double.random(in: 15...25)
///                 withKeyedObservers(key: sensor) { (sensor, observer: SensorObserver) in
///                     observer.reading(sensor: sensor, value: value)
///                 }
///             }
///             Self.sleep(forTimeInterval: 1)
///         }
///     }
/// }
/// let poller = SensorPoller()
/// poller.addKeyedObserver(key: "boiler", boilerDisplay)   // only boiler readings
/// poller.start()
/// ```
///
/// Keyed and plain observers are separate; both may be added and removed
/// from any thread while the loop runs. See ``KeyedObserverRegistry``.
open class KeyedObservableThread: ObservableThread, KeyedProtocolObservable {
    /// The registry holding this thread's keyed observers.
    public let keyedObserverRegistry = KeyedObserverRegistry()

    /// Creates a thread that is not started yet. Not `required` (as in Flowduino): a
    /// subclass overrides it with `override init()` or declares its own.
    public override init() {
        super.init()
    }
}
