// expect-error: actor-isolated property 'total' can not be mutated from a Sendable closure
// A `delivery:` handler takes no isolation from its context: it runs on the
// sending thread, so it cannot touch the actor's state.
import ObserverSwift

actor Tally {
    var total = 0
    func start(_ event: Event<Int>) -> Subscription {
        event.subscribe(delivery: .synchronous) { value in self.total += value }
    }
}
