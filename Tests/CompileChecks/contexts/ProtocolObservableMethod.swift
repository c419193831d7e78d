// A fragment that calls `withObservers` runs in a method of a
// ProtocolObservable.
protocol TemperatureObserver: AnyObject {
    func temperatureChanged(to celsius: Double)
}
final class Thermostat: ProtocolObservable {
    let observerRegistry = ObserverRegistry()
    func update() {
        // fragment
    }
}
