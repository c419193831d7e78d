// expect-error: 'mainActor' is unavailable: mark the closure instead
// A weak target's handler reaches the main actor by being marked @MainActor too.
import ObserverSwift

final class Log: Sendable {
    func write(_ line: String) { print(line) }
}

let lines = Event<String>()
let log = Log()
lines.subscribe(log, delivery: .mainActor) { log, line in log.write(line) }
