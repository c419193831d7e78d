extension Scenario {
    /// The cost of a send that reaches nobody (N = 0) or one observer (N = 1),
    /// in ns per send. Targets: ≤ 8 ns / ≤ 12 ns.
    static let emptyAndOneSend = Scenario(
        id: "empty-and-one", title: "empty send / one observer", presentation: .bars,
        defaultSizes: [0, 1], quickSizes: [0, 1]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let sink = Sink()
            report.figures += context.measure(
                size: size, metric: "ns/send",
                [
                    .raw(count: size, sink: sink),
                    .rawBuffer(count: size, sink: sink),
                    .locked(count: size, sink: sink),
                    .eventClosures(count: size, sink: sink),
                ])
            report.setRatiosToFastestRaw(size: size)
        }
        for (size, limit) in [(0, 8.0), (1, 12.0)] {
            guard let event = report.figure(Contender.eventClosureName, size: size) else { continue }
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id,
                    target: size == 0 ? "empty send ≤ 8 ns" : "one observer ≤ 12 ns",
                    measured:
                        "\(formatFigure(event.median)) ns (p10 \(formatFigure(event.p10)), RAW \(formatFigure(event.ratioToRaw ?? .nan))×)",
                    met: printedFigure(event.median) <= limit))
        }
        return report
    }
}
