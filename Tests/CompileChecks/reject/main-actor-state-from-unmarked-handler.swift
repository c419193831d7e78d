// expect-error: main actor-isolated property 'label' can not be mutated from a Sendable closure
// An unmarked handler runs on the sending thread, not on the main actor.
import ObserverSwift

@MainActor
final class TitleView {
    var label = ""
    var token: Subscription?

    func start(_ event: Event<String>) {
        token = event.subscribe { title in self.label = title }
    }
}
