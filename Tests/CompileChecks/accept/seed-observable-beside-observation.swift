// A file importing both Swift's Observation and ObserverSwiftCompat: the
// seeds' `Observable<T>` is the plain name, the `@Observable` macro expands as
// usual, and Swift's protocol is `Observation.Observable` (the SwiftEvents
// migration guide, "Beside Swift's Observation").
import Observation
import ObserverSwiftCompat

final class InboxViewModel: Sendable {
    let unread: Observable<Int> = Observable(0)  // SwiftEvents' initializer
    let title = Observable<String>(value: "Inbox")  // the recipe's
}

@Observable
final class Settings {
    var theme = "light"
}

func track(_ model: some Observation.Observable) {}

let model = InboxViewModel()
track(Settings())
track(model.unread)
model.unread <<< 3
print(model.unread.value, model.title.value)
