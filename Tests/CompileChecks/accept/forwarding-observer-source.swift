// A type of one's own conforms to ObserverSource by forwarding to a library
// source (here an ObservableValue's replaying view); every subscribe form
// then works on it: closure, weak target, queue, limit, actor, main actor.
import Dispatch
import ObserverSwift

struct Temperature: ObserverSource {
    let reading = ObservableValue(20)

    func _subscribe(
        delivery: Delivery, limit: Int?, replaying current: Int?, _ handler: @escaping @Sendable (Int) -> Void
    ) -> Subscription {
        reading.replaying._subscribe(delivery: delivery, limit: limit, replaying: current, handler)
    }

    func _subscribe<Target: AnyObject>(
        _ target: Target, delivery: Delivery, limit: Int?, replaying current: Int?,
        _ handler: @escaping @Sendable (Target, Int) -> Void
    ) -> Subscription {
        reading.replaying._subscribe(target, delivery: delivery, limit: limit, replaying: current, handler)
    }

    func _withCurrentValue<Result>(_ body: (Int?) -> Result) -> Result {
        reading.replaying._withCurrentValue(body)
    }
}

final class Gauge: Sendable {
    func show(_ degrees: Int) { print(degrees) }
}

actor Log {
    var lines: [Int] = []
    func start(_ source: Temperature) {
        source.subscribe(isolatedTo: self) { log, degrees in log.lines.append(degrees) }
    }
}

@MainActor final class Panel {
    var shown = 0
    func bind(to source: Temperature) -> Subscription {
        source.subscribe { degrees in self.shown = degrees }
    }
}

let temperature = Temperature()
let gauge = Gauge()
let tokens = SubscriptionBag()
temperature.subscribe(limit: 3) { degrees in print(degrees) }.store(in: tokens)
temperature.subscribe(gauge) { gauge, degrees in gauge.show(degrees) }
temperature.subscribe(delivery: .queue(.global())) { degrees in print(degrees) }.store(in: tokens)
let panel = await MainActor.run { Panel() }
panel.bind(to: temperature).store(in: tokens)
await Log().start(temperature)
temperature.reading.value = 21
tokens.cancelAll()
