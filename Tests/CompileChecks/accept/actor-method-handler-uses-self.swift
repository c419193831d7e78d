// A closure in an actor's method that uses `self` runs isolated to the
// actor and may mutate its state; one that does not use `self` runs on the
// sending thread.
import ObserverSwift

actor Tally {
    var total = 0
    func start(_ event: Event<Int>, _ value: ObservableValue<Int>) -> [Subscription] {
        [
            event.subscribe { value in self.total += value },
            value.replaying.subscribe { value in self.total = value },
            event.subscribe { value in print("sent", value) },
        ]
    }
}

@globalActor
actor Renderer {
    static let shared = Renderer()
}

@Renderer
final class Frame {
    var count = 0
    func start(_ ticks: Event<Int>) -> Subscription {
        ticks.subscribe { tick in self.count = tick }
    }
}
