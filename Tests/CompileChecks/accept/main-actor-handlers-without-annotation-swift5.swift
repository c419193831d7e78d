// swift-language-mode: 5
// The same view-model handlers compile in Swift 5 mode with no warning.
import ObserverSwift

@MainActor
final class Dashboard {
    var bytes = 0
    var fraction = 0.0
    let subscriptions = SubscriptionBag()

    init(downloads: Event<Int>, progress: ObservableValue<Double>) {
        downloads.subscribe { bytes in self.bytes = bytes }.store(in: subscriptions)
        downloads.subscribe(self) { me, bytes in me.bytes += bytes }
        progress.replaying.subscribe { fraction in self.fraction = fraction }.store(in: subscriptions)
    }
}
