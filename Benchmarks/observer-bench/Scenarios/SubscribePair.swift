import ObserverSwift

extension Scenario {
    /// One subscribe followed by its unsubscribe, with N observers already
    /// registered, in ns per pair. Every pair's removal is checked (it must
    /// report that it removed something). Target: ≤ 60 ns, and the pair at
    /// 100k within 1.5× of the pair at 1k. A `KeyedEvent` pair (N observers
    /// under N keys; each pair subscribes to a key nobody else observes, so
    /// it creates and removes that key): ≤ 1.3× the `Event` pair.
    static let subscribePair = Scenario(
        id: "subscribe-pair", title: "subscribe + unsubscribe pair", presentation: .bars,
        defaultSizes: [1_000, 100_000], quickSizes: [1_000, 100_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let sink = Sink()
            let targets = (0..<size).map { _ in Target() }
            report.figures += context.measure(
                size: size, metric: "ns/pair",
                [
                    .rawPairs(registered: size, sink: sink),
                    .lockedPairs(registered: size, sink: sink),
                    .weakPairs(registered: targets, sink: sink),
                    .eventPairs(registered: size, sink: sink),
                    .keyedPairs(registered: size, sink: sink),
                ])
            report.setRatios(size: size, reference: "RAW")
            withExtendedLifetime(targets) {}
        }
        let pairs = context.sizes.compactMap { size in
            report.figure(Contender.eventClosureName, size: size).map { (size, $0.median) }
        }
        if !pairs.isEmpty {
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: "Event pair ≤ 60 ns (N=1k, 100k)",
                    measured: ScenarioReport.list(pairs.map { ("N=\(sizeLabel($0.0))", $0.1) }, unit: " ns")
                        + "; load \(loadAverage())",
                    met: pairs.allSatisfy { printedFigure($0.1) <= 60 }))
        }
        if let small = pairs.first(where: { $0.0 == 1_000 }), let large = pairs.first(where: { $0.0 == 100_000 }) {
            let growth = large.1 / small.1
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: "pair at 100k ≤ 1.5× pair at 1k",
                    measured: "\(formatFigure(growth))×", met: printedFigure(growth) <= 1.5))
        }
        for size in context.sizes {
            guard let event = report.figure(Contender.eventClosureName, size: size),
                let keyed = report.figure(Contender.keyedEventName, size: size)
            else { continue }
            let ratio = keyed.median / event.median
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id,
                    target: "KeyedEvent pair ≤ 1.3× Event pair (N=\(sizeLabel(size)))",
                    measured: "\(formatFigure(keyed.median)) ns, \(formatFigure(ratio))× the Event pair",
                    met: printedFigure(ratio) <= 1.3))
        }
        return report
    }
}

/// Pair contenders: `send(k)` performs k subscribe+unsubscribe pairs and adds
/// the pair's number to the checksum when the unsubscribe removed it.
extension Contender {
    static func rawPairs(registered: Int, sink: Sink) -> Contender {
        let observers = MutableRawObservers((0..<registered).map { _ in { value in sink.total &+= value } })
        return Contender(
            implementation: "RAW", deliveriesPerSend: 1,
            send: { pairs in
                for value in stride(from: 1, through: pairs, by: 1) {
                    observers.handlers.append { value in sink.total &+= value }
                    if observers.handlers.popLast() != nil { sink.total &+= value }
                }
            },
            checksum: { sink.total })
    }

    static func lockedPairs(registered: Int, sink: Sink) -> Contender {
        let observers = LockedObservers()
        for _ in 0..<registered { observers.subscribe { value in sink.total &+= value } }
        return Contender(
            implementation: "LOCKED", deliveriesPerSend: 1,
            send: { pairs in
                for value in stride(from: 1, through: pairs, by: 1) {
                    let id = observers.subscribe { value in sink.total &+= value }
                    if observers.unsubscribe(id) { sink.total &+= value }
                }
            },
            checksum: { sink.total })
    }

    static func weakPairs(registered targets: [Target], sink: Sink) -> Contender {
        let observers = WeakObservers<Target>()
        for target in targets {
            observers.subscribe(target) { target, value in target.total &+= value }
        }
        let newcomer = Target()
        return Contender(
            implementation: "WEAK", deliveriesPerSend: 1,
            send: { pairs in
                for value in stride(from: 1, through: pairs, by: 1) {
                    observers.subscribe(newcomer) { target, value in target.total &+= value }
                    if observers.unsubscribe(newcomer) { sink.total &+= value }
                }
            },
            checksum: { sink.total })
    }

    /// A `KeyedEvent` with `registered` closure subscriptions under as many
    /// keys; each pair subscribes to and cancels a key of its own (-1).
    static func keyedPairs(registered: Int, sink: Sink) -> Contender {
        let keyed = KeyedEvent<Int, Int>()
        for key in 0..<registered { _ = keyed.subscribe(key: key) { value in sink.total &+= value } }
        return Contender(
            implementation: keyedEventName, deliveriesPerSend: 1,
            send: { pairs in
                for value in stride(from: 1, through: pairs, by: 1) {
                    let subscription = keyed.subscribe(key: -1) { value in sink.total &+= value }
                    if subscription.cancel() { sink.total &+= value }
                }
            },
            checksum: { sink.total },
            tearDown: {
                let keys = keyed.keyCount
                if keys != registered {
                    Verification.fail("subscribe-pair: \(keys) keys left, expected \(registered)")
                }
                keyed.unsubscribeAll()
            })
    }

    static func eventPairs(registered: Int, sink: Sink) -> Contender {
        let event = Event<Int>()
        for _ in 0..<registered { _ = event.subscribe { value in sink.total &+= value } }
        return Contender(
            implementation: eventClosureName, deliveriesPerSend: 1,
            send: { pairs in
                for value in stride(from: 1, through: pairs, by: 1) {
                    let subscription = event.subscribe { value in sink.total &+= value }
                    if subscription.cancel() { sink.total &+= value }
                }
            },
            checksum: { sink.total },
            tearDown: {
                let live = event.subscribersCount
                if live != registered {
                    Verification.fail("subscribe-pair: \(live) subscriptions left, expected \(registered)")
                }
                event.unsubscribeAll()
            })
    }
}

/// RAW for subscribing: a plain mutable array (append, remove the last).
final class MutableRawObservers {
    var handlers: [(Int) -> Void]

    init(_ handlers: [(Int) -> Void]) {
        self.handlers = handlers
    }
}
