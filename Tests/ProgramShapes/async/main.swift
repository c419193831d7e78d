import Dispatch
import Foundation
import ProgramShapeChecks

/// Returns once the main queue has run every block enqueued on it before
/// this call (it runs them in order, and the main actor's queued deliveries
/// are among them). Always suspends.
func mainQueueTurn() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.main.async { continuation.resume() }
    }
}

// Top-level code with `await`: after the first suspension, the rest runs on
// the main actor, which on Linux is the main queue drained off the main thread.
await mainQueueTurn()
let checks = MainActorChecks()
checks.start(shape: "top-level code after await")
await mainQueueTurn()
let status = checks.finish()
exit(status)
