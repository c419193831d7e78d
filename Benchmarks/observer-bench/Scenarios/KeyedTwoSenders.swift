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
            let runs: [(name: String, send: (Int) -> Void)] = [
                (Contender.keyedEventName, { value in event.send(value, forKey: hot) }),
                ("LOCKED [key: [closure]]", { value in locked.send(value, forKey: hot) }),
            ]
            func run(_ index: Int, sends: Int) -> UInt64 {
                measureKeyedSenders(runs[index].name, runs[index].send, sends: sends, counters: counters)
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
                        met: speedup >= 3))
            }
        }
        return report
    }
}

/// Runs two threads each sending values 1...sends (tagged with the thread in
/// the low bit) through `send`, from a common start; returns the wall time
/// until both have finished and verifies every delivery of each sender.
func measureKeyedSenders(
    _ name: String, _ send: @escaping (Int) -> Void, sends: Int, counters: PerThreadCounters
) -> UInt64 {
    let line = StartLine()
    let before = (0..<2).map(counters.stable)
    let threads = (0..<2).map { thread in
        BenchThread {
            line.arriveAndWait()
            for index in stride(from: 1, through: sends, by: 1) {
                send(index << 1 | thread)
            }
        }
    }
    line.release(workers: 2)
    let start = monotonicNanoseconds()
    for thread in threads { thread.join() }
    let elapsed = monotonicNanoseconds() &- start
    for thread in 0..<2 {
        // Sender t sent 2i + t for i in 1...sends to the one observer of the key.
        let expected = expectedChecksum(sends: sends, deliveriesPerSend: 2) &+ thread &* sends
        Verification.expect(
            counters.stable(thread) &- before[thread], equals: expected,
            "\(name): deliveries of sender \(thread) with 2 senders")
    }
    return elapsed
}
