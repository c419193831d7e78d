// expect-error: no exact matches in call to initializer
// A type conforms to ObserverSource only by forwarding to one of the
// library's sources: no public initializer makes the Subscription that
// `_subscribe` returns.
import ObserverSwift

struct Silent: ObserverSource {
    func _subscribe(
        delivery: Delivery, limit: Int?, replaying current: Int?, _ handler: @escaping @Sendable (Int) -> Void
    ) -> Subscription {
        Subscription()
    }

    func _subscribe<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, replaying current: Int?,
        _ handler: @escaping @Sendable (Target, Int) -> Void
    ) -> Subscription {
        Subscription()
    }
}
