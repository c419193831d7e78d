// The documentation's idiom for a @MainActor object at the top level, in Swift 5
// mode, in a program with other top-level awaits before and after it.
// swift-language-mode: 5
import ObserverSwift

// The program awaits before the idiom...
await Task.yield()

@MainActor
final class InboxView {
    var lines: [String] = []
}

let didReceive = Event<String>()
let view = await MainActor.run { InboxView() }
didReceive.subscribe(view) { @MainActor view, message in view.lines.append(message) }
didReceive.send("hello")

// ...and after it.
for await message in didReceive.values.prefix(1) { print(message) }
