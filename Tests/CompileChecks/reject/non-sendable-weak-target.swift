// expect-error: type 'Screen' does not conform to the 'Sendable' protocol
// A weak target whose state the sending thread would mutate.
import ObserverSwift

final class Screen {
    var titles: [String] = []
}

func show(_ event: Event<String>, on screen: Screen) {
    event.subscribe(screen) { screen, title in screen.titles.append(title) }
}
