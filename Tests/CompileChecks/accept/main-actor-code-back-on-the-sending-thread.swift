// Main-actor code runs a handler on the sending thread by saying so:
// `delivery: .synchronous`, a nonisolated function, or a closure stored
// first in a plain @Sendable variable. None of them may touch main-actor
// state.
import ObserverSwift

@MainActor
final class Meter {
    let subscriptions = SubscriptionBag()

    init(readings: Event<Int>) {
        readings.subscribe(delivery: .synchronous) { value in print("raw", value) }.store(in: subscriptions)
        readings.subscribe(Meter.log).store(in: subscriptions)
        let onSender: @Sendable (Int) -> Void = { value in print("sender", value) }
        readings.subscribe(onSender).store(in: subscriptions)
    }

    nonisolated static func log(_ value: Int) { print("log", value) }
}
