// expect-error: actor-isolated property 'total' can not be mutated from a Sendable closure
// An actor mutating its state from a handler that runs on the sending thread.
import ObserverSwift

actor Tally {
    var total = 0
    func start(_ event: Event<Int>) -> Subscription {
        event.subscribe { value in self.total += value }
    }
}
