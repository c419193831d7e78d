// A fragment that calls `withKeyedObservers` runs in a method of a
// KeyedProtocolObservable, with the method's `symbol` and `price`.
protocol PriceObserver: AnyObject {
    func priceChanged(symbol: String, to price: Double)
}
final class Quotes: KeyedProtocolObservable {
    let keyedObserverRegistry = KeyedObserverRegistry()
    func update(_ symbol: String, _ price: Double) {
        // fragment
    }
}
