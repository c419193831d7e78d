// A closure or weak-target handler written in a @MainActor type needs no
// annotation on any kind: it takes the main actor from its context and may
// mutate main-actor state.
import ObserverSwift

@MainActor
final class Dashboard {
    var bytes = 0
    var fraction = 0.0
    var price = 0.0
    var moves: [String] = []
    let subscriptions = SubscriptionBag()

    init(downloads: Event<Int>, progress: ObservableValue<Double>, prices: KeyedEvent<String, Double>) {
        downloads.subscribe { bytes in self.bytes = bytes }.store(in: subscriptions)
        downloads.subscribe(self) { me, bytes in me.bytes += bytes }
        progress.subscribe { fraction in self.fraction = fraction }.store(in: subscriptions)
        progress.replaying.subscribe(self) { me, fraction in me.fraction = fraction }
        prices.subscribe(key: "AAPL") { price in self.price = price }.store(in: subscriptions)
        prices.subscribe(self, key: "MSFT") { me, price in me.price = price }
        prices.forKeys(["AAPL", "MSFT"]).subscribe { symbol, _ in self.moves.append(symbol) }.store(in: subscriptions)
        prices.forKeys(["GOOG"]).subscribe(self) { me, item in me.moves.append(item.key) }
    }

    func refresh(_ counts: Event<Int>) {
        counts.subscribe(limit: 1) { count in self.bytes = count }.store(in: subscriptions)
    }
}
