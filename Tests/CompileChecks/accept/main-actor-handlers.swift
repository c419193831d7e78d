// Handlers marked @MainActor still compile (and run on the main actor),
// also where the context is not main-actor code.
import ObserverSwift

@MainActor
final class TitleView {
    var label = ""
    var bag = Set<Subscription>()

    func start(_ event: Event<String>, _ name: ObservableValue<String>) {
        event.subscribe { @MainActor title in self.label = title }.store(in: &bag)
        event.subscribe(self) { @MainActor view, title in view.label = title }
        event.subscribe(self) { @MainActor view, title in view.label = title }
        name.replaying.subscribe(self) { @MainActor view, name in view.label = name }
        name.subscribe { @MainActor name in self.label = name }.store(in: &bag)
    }
}
