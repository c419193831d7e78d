// Marked main-actor handlers compile from a @MainActor class and may touch
// its state; the weak-target forms need no token.
import ObserverSwift

@MainActor
final class TitleView {
    var label = ""
    var bag = Set<Subscription>()

    func start(_ event: Event<String>, _ name: ObservableValue<String>) {
        event.subscribe { @MainActor title in self.label = title }.store(in: &bag)
        event.subscribe(self) { @MainActor view, title in view.label = title }
        event.subscribe(self) { @MainActor view, title in view.label = title }
        name.subscribe(self, replay: true) { @MainActor view, name in view.label = name }
        name.subscribe { @MainActor name in self.label = name }.store(in: &bag)
    }
}
