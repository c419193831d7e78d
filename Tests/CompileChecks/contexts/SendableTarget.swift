// A fragment that subscribes `self` runs in a method of a Sendable target.
final class Chart: Sendable {
    func render(_ value: Int) { print(value) }
    func show(_ price: Double) { print(price) }

    func start(event: Event<Int>, prices: KeyedEvent<String, Double>) {
        // fragment
    }
}
