import ObserverSwift

extension Scenario {
    /// Per-send latency at N = 100 while another thread subscribes and
    /// cancels in a tight loop. Each send is timed on its own with
    /// `clock_gettime` (its ~20 ns are included in every sample). Shown
    /// beside: the same sends with no churn, and LOCKED under the same churn.
    /// Target: p99.9 ≤ 10× p50 (no writer ever stalls a sender).
    static let latencyUnderChurn = Scenario(
        id: "latency-churn", title: "send latency while another thread churns", presentation: .bars,
        defaultSizes: [100], quickSizes: [100]
    ) { context in
        var report = ScenarioReport()
        let samplesPerRepetition = context.settings.repetitionNanoseconds >= 10_000_000 ? 20_000 : 5_000
        for size in context.sizes {
            context.step(
                "N=\(size): per-send latency, \(context.settings.repetitions) × \(samplesPerRepetition) sends each")
            let counters = PerThreadCounters()
            let event = ChurnSubject.event(size, counters)
            let locked = ChurnSubject.locked(size, counters)
            let runs: [(name: String, subject: ChurnSubject, churn: Bool)] = [
                ("\(Contender.eventClosureName), churn", event, true),
                ("\(Contender.eventClosureName), no churn", event, false),
                ("LOCKED, churn", locked, true),
            ]
            var samples = Array(repeating: [Double](), count: runs.count)
            var churnPairs = Array(repeating: 0, count: runs.count)
            for index in runs.indices {  // warm-up
                _ = sampleLatencies(
                    runs[index].subject, observers: size, sends: samplesPerRepetition / 4,
                    churn: runs[index].churn, counters: counters)
            }
            for _ in 0..<context.settings.repetitions {
                for index in runs.indices {
                    let result = sampleLatencies(
                        runs[index].subject, observers: size, sends: samplesPerRepetition,
                        churn: runs[index].churn, counters: counters)
                    samples[index] += result.latencies
                    churnPairs[index] += result.churnPairs
                }
            }
            event.tearDown()
            for index in runs.indices {
                report.figures.append(
                    Figure(
                        scenario: context.scenario.id, size: size, implementation: runs[index].name,
                        metric: "ns/send", summary: Summary(samples[index]), includeTails: true))
            }
            if let figure = report.figures.first(where: { $0.implementation == runs[0].name }),
                let p999 = figure.p999
            {
                let tail = p999 / figure.median
                report.verdicts.append(
                    Verdict(
                        scenario: context.scenario.id,
                        target: "p99.9 ≤ 10× p50 (N=\(sizeLabel(size)), churning thread)",
                        measured: "p50 \(formatFigure(figure.median)) ns, p99 \(formatFigure(figure.p99 ?? .nan)) ns, "
                            + "p99.9 \(formatFigure(p999)) ns: \(formatFigure(tail))× (\(churnPairs[0]) churn pairs during it)",
                        met: printedFigure(tail) <= 10))
            }
        }
        return report
    }
}

/// Sends values 1...sends from this thread, timing each send, while (if
/// `churn`) another thread subscribes and cancels as fast as it can.
func sampleLatencies(
    _ subject: ChurnSubject, observers: Int, sends: Int, churn: Bool, counters: PerThreadCounters
) -> (latencies: [Double], churnPairs: Int) {
    let line = StartLine()
    var churnPairs = 0
    let churner =
        churn
        ? BenchThread {
            line.arriveAndWait()
            while !line.shouldStop {
                subject.churnOnce()
                churnPairs += 1
            }
        } : nil
    line.release(workers: churner == nil ? 0 : 1)
    var latencies = [Double]()
    latencies.reserveCapacity(sends)
    let before = counters.stable(0)
    for index in stride(from: 1, through: sends, by: 1) {
        let start = monotonicNanoseconds()
        subject.send(index << 2)  // sender 0: the two low bits clear (see ChurnSubject.handler)
        let end = monotonicNanoseconds()
        latencies.append(Double(end &- start))
    }
    line.stop.store(true, ordering: .relaxed)
    churner?.join()
    Verification.expect(
        counters.stable(0) &- before, equals: expectedChecksum(sends: sends, deliveriesPerSend: 4) &* observers,
        "\(subject.name): deliveries while measuring latency")
    return (latencies, churnPairs)
}
