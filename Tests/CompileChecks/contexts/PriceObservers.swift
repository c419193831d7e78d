// The protocol, registry and base class the keyed protocol-typed fragments
// name.
protocol PriceObserver: AnyObject {
    func priceChanged(symbol: String, to price: Double)
}
class SomeFrameworkBaseClass {}
let registry = KeyedObserverRegistry()
// fragment
