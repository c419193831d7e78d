// An actor observes with handlers isolated to it: they may mutate its state.
import ObserverSwift

actor Tally {
    var total = 0
    var last: [String: Double] = [:]

    func start(_ event: Event<Int>, _ value: ObservableValue<Int>, _ prices: KeyedEvent<String, Double>) {
        event.subscribe(isolatedTo: self) { tally, value in tally.total += value }
        value.replaying.subscribe(isolatedTo: self) { tally, value in tally.total = value }
        prices.subscribe(isolatedTo: self, key: "AAPL") { tally, price in tally.last["AAPL"] = price }
        prices.forKeys(["A", "B"]).subscribe(isolatedTo: self) { tally, quote in tally.last[quote.key] = quote.value }
    }
}
