// The sources and consumers the `for await` fragments name, at the top level
// of a program (a top-level `for await` makes it asynchronous).
final class Sensor: Sendable {
    let changed = Event<Double>()
}
final class Thermostat: Sendable {
    let target = ObservableValue(20.0)
}
let ticker = Event<Double>()
let sensor = Sensor()
let quotes = KeyedEvent<String, Double>()
let thermostat = Thermostat()
func render(_ price: Double) { print(price) }
func plot(_ reading: Double) { print(reading) }
func show(_ price: Double) { print(price) }
func display(_ temperature: Double) { print(temperature) }
// fragment
