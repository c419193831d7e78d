import Dispatch
import Foundation
import ProgramShapeChecks

// Top-level code without `await`: the main thread runs it, on the main actor.
// `run-loop` drains the main queue with the main run loop; `dispatch-main`
// hands the main thread to `dispatchMain()`, which parks it (on Linux the
// main queue is then drained on another thread).
let shape = CommandLine.arguments.dropFirst().first ?? "run-loop"
let checks = MainActorChecks()
switch shape {
case "run-loop":
    checks.start(shape: "top-level code, run loop")
    RunLoop.main.run(until: Date().addingTimeInterval(0.2))
    let status = checks.finish()
    exit(status)
case "dispatch-main":
    DispatchQueue.main.async {
        MainActor.assumeIsolated {
            checks.start(shape: "dispatchMain")
            DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) {
                let status = MainActor.assumeIsolated { checks.finish() }
                exit(status)
            }
        }
    }
    dispatchMain()
default:
    print("usage: shape-sync [run-loop | dispatch-main]")
    exit(2)
}
