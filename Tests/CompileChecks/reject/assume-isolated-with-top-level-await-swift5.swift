// `MainActor.assumeIsolated` at the top level stops compiling once the
// program has a top-level await, in Swift 5 mode too (the documentation writes
// `await MainActor.run { ... }` instead).
// swift-language-mode: 5
// warnings-as-errors
// expect-error: 'assumeIsolated' is unavailable from asynchronous contexts
import ObserverSwift

@MainActor
final class InboxView {
    var lines: [String] = []
}

let view = MainActor.assumeIsolated { InboxView() }
await Task.yield()
