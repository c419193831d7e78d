import Foundation
import ProgramShapeChecks

// Top-level code with `await`: after the first suspension, the rest runs on
// the main actor, which on Linux is the main queue drained off the main thread.
try await Task.sleep(nanoseconds: 10_000_000)
let checks = MainActorChecks()
checks.start(shape: "top-level code after await")
try await Task.sleep(nanoseconds: 200_000_000)
let status = checks.finish()
exit(status)
