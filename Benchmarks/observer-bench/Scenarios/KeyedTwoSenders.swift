import ObserverSwift

extension Scenario {
    /// Two threads sending at once to one key of a `KeyedEvent` holding K
    /// keys with one observer each (K = 1M by default, 100k with --quick),
    /// against the hand-written `[key: [closure]]` behind a `Mutex` of
    /// `keyed-send`, whose lock both senders then contend for. Figures are
    /// wall time / all sends of both threads (aggregate); every delivery is
    /// counted per sender and checked. Target: ≥ 3× faster than LOCKED.
    static let keyedTwoSenders = Scenario(
        id: "keyed-two-senders", title: "keyed send, 2 senders, one key among K keys", presentation: .bars,
        defaultSizes: [1_000_000], quickSizes: [100_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            context.step("K=\(sizeLabel(size)): ObserverSwift KeyedEvent and LOCKED [key: [closure]], 2 senders")
            let counters = PerThreadCounters()
            let handler = ChurnSubject.handler(counters, base: 0)
            let event = KeyedEvent<Int, Int>()
            for key in 0..<size { _ = event.subscribe(key: key, handler) }
            let locked = LockedKeyedObservers()
            for key in 0..<size { locked.subscribe(key: key, handler) }
            let hot = Contender.hotKey(among: size)
            // Two senders, no churn thread: the key's one observer counts
            // each sender's deliveries in its own slot.
            let runs = [
                ChurnSubject(
                    name: Contender.keyedEventName, churns: false,
                    send: { value in event.send(value, forKey: hot) }, churnOnce: {}),
                ChurnSubject(
                    name: "LOCKED [key: [closure]]", churns: false,
                    send: { value in locked.send(value, forKey: hot) }, churnOnce: {}),
            ]
            func run(_ index: Int, sends: Int) -> UInt64 {
                measureSenders(runs[index], observers: 1, senders: 2, sends: sends, counters: counters).elapsed
            }
            let sends = runs.indices.map { index in
                calibrateSends(target: context.settings.repetitionNanoseconds) { run(index, sends: $0) }
            }
            var samples = Array(repeating: [Double](), count: runs.count)
            for _ in 0..<context.settings.repetitions {
                for index in runs.indices {
                    let elapsed = run(index, sends: sends[index])
                    samples[index].append(Double(elapsed) / Double(2 * sends[index]))
                }
            }
            event.unsubscribeAll()
            for (index, run) in runs.enumerated() {
                report.figures.append(
                    Figure(
                        scenario: context.scenario.id, size: size, implementation: run.name,
                        metric: "ns/send (aggregate)", summary: Summary(samples[index])))
            }
            report.setRatios(size: size, reference: "LOCKED [key: [closure]]")
            if let keyed = report.figure(Contender.keyedEventName, size: size),
                let lockedFigure = report.figure("LOCKED [key: [closure]]", size: size)
            {
                let speedup = lockedFigure.median / keyed.median
                report.verdicts.append(
                    Verdict(
                        scenario: context.scenario.id,
                        target: "2 senders: ≥ 3× faster than LOCKED [key: [closure]] (\(sizeLabel(size)) keys)",
                        measured:
                            "\(formatFigure(speedup))× (\(formatFigure(lockedFigure.median)) vs "
                            + "\(formatFigure(keyed.median)) ns/send aggregate); load \(loadAverage())",
                        met: printedFigure(speedup) >= 3))
            }
        }
        return report
    }
}
