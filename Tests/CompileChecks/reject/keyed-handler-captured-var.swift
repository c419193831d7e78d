// expect-error: mutation of captured var 'seen' in concurrently-executing code
// Keyed handlers run on the sending thread.
import ObserverSwift

func watch(_ prices: KeyedEvent<String, Double>) -> Subscription {
    var seen = 0
    return prices.subscribe(key: "AAPL") { _ in seen += 1 }
}
