// Main-actor state is touched only from handlers marked @MainActor, which
// ObserverSwift delivers on the main actor.
import ObserverSwift

@MainActor
final class Badge {
    var count = 0
    let subscriptions = SubscriptionBag()

    init(unread: Event<Int>) {
        unread.subscribe { @MainActor count in self.count = count }.store(in: subscriptions)
        unread.subscribe(self) { @MainActor badge, count in badge.count = count }
    }
}
