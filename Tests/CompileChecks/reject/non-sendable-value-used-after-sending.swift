// expect-error: sending value of non-Sendable type '() async -> ()' risks causing data races
// A non-Sendable object handed to a task must not be used here afterwards
// (a region-based diagnostic: a SIL pass reports it, -typecheck does not).
import ObserverSwift

final class Draft {
    var text = ""
}

func edit(_ edits: ObservableValue<String>) {
    let draft = Draft()
    Task {
        draft.text = "from the task"
    }
    draft.text = "from here"
    edits.value = draft.text
}
