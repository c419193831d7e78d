// expect-error: 'mainActor' is unavailable: main-actor delivery follows the handler's isolation: leave delivery: out
// A weak target's handler reaches the main actor by its isolation too.
import ObserverSwift

final class Log: Sendable {
    func write(_ line: String) { print(line) }
}

let lines = Event<String>()
let log = Log()
lines.subscribe(log, delivery: .mainActor) { log, line in log.write(line) }
