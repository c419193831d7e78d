// expect-error: type 'Draft' does not conform to the 'Sendable' protocol
// A queued delivery hands the value to another thread.
import Dispatch
import ObserverSwift

final class Draft {
    var text = ""
}

func edit(_ drafts: Event<Draft>, on queue: DispatchQueue) -> Subscription {
    drafts.subscribe(delivery: .queue(queue)) { draft in draft.text += "!" }
}
