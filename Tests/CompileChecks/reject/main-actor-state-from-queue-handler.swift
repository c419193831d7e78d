// expect-error: main actor-isolated property 'label' can not be mutated from a Sendable closure
// A queue-delivered handler is a plain @Sendable closure, even when written
// in a @MainActor type: it runs on the queue, not on the main actor.
import Dispatch
import ObserverSwift

@MainActor
final class TitleView {
    var label = ""
    var token: Subscription?

    func start(_ event: Event<String>) {
        token = event.subscribe(delivery: .queue(.main)) { title in self.label = title }
    }
}
