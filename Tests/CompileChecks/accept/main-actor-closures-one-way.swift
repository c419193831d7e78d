// The one way for a closure to run on the main actor is to be marked
// @MainActor, for every kind; `delivery:` places a @Sendable handler on the
// sending thread or on a queue.
import Dispatch
import ObserverSwift

@MainActor
final class Dashboard {
    var bytes = 0
    var fraction = 0.0
    var price = 0.0
    let subscriptions = SubscriptionBag()

    init(downloads: Event<Int>, progress: ObservableValue<Double>, prices: KeyedEvent<String, Double>) {
        downloads.subscribe { @MainActor bytes in self.bytes = bytes }.store(in: subscriptions)
        progress.subscribe(replay: true) { @MainActor fraction in self.fraction = fraction }.store(in: subscriptions)
        prices.subscribe(key: "AAPL") { @MainActor price in self.price = price }.store(in: subscriptions)
        let log = DispatchQueue(label: "log")
        downloads.subscribe(delivery: .queue(log)) { bytes in print("downloaded", bytes) }.store(in: subscriptions)
        downloads.subscribe(delivery: .synchronous) { bytes in print("sent", bytes) }.store(in: subscriptions)
    }
}
