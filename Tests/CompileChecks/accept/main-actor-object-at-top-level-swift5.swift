// The documentation's idiom for a @MainActor object at the top level, in Swift 5
// mode, in a program whose only top-level await is the idiom's own.
// swift-language-mode: 5
import ObserverSwift

@MainActor
final class InboxView {
    var lines: [String] = []
}

let didReceive = Event<String>()
let view = await MainActor.run { InboxView() }
didReceive.subscribe(view) { @MainActor view, message in view.lines.append(message) }
didReceive.send("hello")
