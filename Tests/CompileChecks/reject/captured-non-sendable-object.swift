// expect-error: capture of 'log' with non-Sendable type 'Log' in a '@Sendable' closure
// A handler capturing a plain mutable class: concurrent sends would race on it.
import ObserverSwift

final class Log {
    var lines: [String] = []
}

func start(_ event: Event<String>, log: Log) -> Subscription {
    event.subscribe { line in log.lines.append(line) }
}
