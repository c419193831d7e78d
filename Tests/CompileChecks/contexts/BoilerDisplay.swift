// The observer the KeyedObservableThread example adds (its protocol is the
// example's own).
final class Display: SensorObserver, Sendable {
    func reading(sensor: String, value: Double) { print(sensor, value) }
}
let boilerDisplay = Display()
// fragment
