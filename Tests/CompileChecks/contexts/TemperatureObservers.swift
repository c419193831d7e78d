// The protocol, registry and base class the protocol-typed fragments name.
protocol TemperatureObserver: AnyObject {
    func temperatureChanged(to celsius: Double)
}
class SomeFrameworkBaseClass {}
let registry = ObserverRegistry()
// fragment
