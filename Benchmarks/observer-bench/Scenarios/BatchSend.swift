import ObserverSwift

extension Scenario {
    /// Bursts of 64 values to N closure observers: `send(contentsOf:)`
    /// against 64 single sends, RAW and RAW +0 (the floor: an array of the
    /// same closures called without reference counting), in ns per value per
    /// observer.
    /// Target: ≤ 2 ns per value per observer at N = 1.
    static let batchSend = Scenario(
        id: "batch-send", title: "burst of 64 values: send(contentsOf:)", presentation: .bars,
        defaultSizes: [1, 100], quickSizes: [1, 100]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let sink = Sink()
            report.figures += context.measure(
                size: size, metric: "ns/value/observer",
                [
                    .raw(count: size, sink: sink),
                    .rawBorrowed(count: size, sink: sink),
                    .eventClosures(count: size, sink: sink),
                    .eventBatches(count: size, burst: 64, sink: sink),
                ])
            report.setRatios(size: size, reference: "RAW")
        }
        if let batch = report.figure(Contender.eventBatchName, size: 1) {
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: "≤ 2 ns per value per observer at N=1 (bursts of 64)",
                    measured:
                        "\(formatFigure(batch.median)) ns (p10 \(formatFigure(batch.p10)); single sends "
                        + "\(formatFigure(report.figure(Contender.eventClosureName, size: 1)?.median ?? .nan)) ns)",
                    met: printedFigure(batch.median) <= 2))
        }
        return report
    }
}

extension Contender {
    static let eventBatchName = "ObserverSwift Event send(contentsOf:)"

    /// An `Event<Int>` with `count` closure subscriptions; `send(k)` sends
    /// 1...k in bursts of `burst` values.
    static func eventBatches(count: Int, burst: Int, sink: Sink) -> Contender {
        let event = Event<Int>()
        for _ in 0..<count { _ = event.subscribe { value in sink.total &+= value } }
        return Contender(
            implementation: eventBatchName, deliveriesPerSend: count,
            send: { sends in eventBatchSend(event, sends: sends, burst: burst) },
            checksum: { sink.total },
            tearDown: { event.unsubscribeAll() })
    }
}

@inline(never)
func eventBatchSend(_ event: Event<Int>, sends: Int, burst: Int) {
    var start = 1
    while start <= sends {
        let end = min(start + burst - 1, sends)
        event.send(contentsOf: start...end)
        start = end + 1
    }
}
