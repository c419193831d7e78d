// expect-error: non-Sendable type 'Event<Draft>'
// `Event` is Sendable only when its value is: an event of a non-Sendable value
// cannot be shared with a task that sends on another thread.
import ObserverSwift

final class Draft {
    var text = ""
}

func publish(_ drafts: Event<Draft>) {
    Task.detached { @Sendable in
        drafts.send(Draft())
    }
}
