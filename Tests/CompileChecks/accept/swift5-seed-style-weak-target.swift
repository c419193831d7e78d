// swift-language-mode: 5
// SwiftEvents-style code in a Swift 5 module: a plain (non-Sendable) class
// subscribes itself and mutates its own state in the handler.
import ObserverSwift

final class ViewModel {
    let titleChanged = Event<String>()
    var titles: [String] = []

    init() {
        titleChanged.subscribe(self) { (self, title) in
            self.titles.append(title)
        }
    }
}
