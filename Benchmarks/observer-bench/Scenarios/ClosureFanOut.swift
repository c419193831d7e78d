extension Scenario {
    /// One send reaching N closure observers: ObserverSwift's `Event` against
    /// RAW (both plain loops) and LOCKED. Target: ≤ 0.3× RAW at N ≥ 100.
    static let closureFanOut = Scenario(
        id: "closure-fan-out", title: "closure fan-out", presentation: .fanOut,
        defaultSizes: [1, 10, 100, 1_000, 10_000, 100_000], quickSizes: [1, 100, 10_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let sink = Sink()
            report.figures += context.measure(
                size: size, metric: "ns/delivery",
                [
                    .raw(count: size, sink: sink),
                    .rawBuffer(count: size, sink: sink),
                    .rawBorrowed(count: size, sink: sink),
                    .locked(count: size, sink: sink),
                    .eventClosures(count: size, sink: sink),
                ])
            report.setRatiosToFastestRaw(size: size)
        }
        let ratios = context.sizes.filter { $0 >= 100 }.compactMap { size in
            report.figure(Contender.eventClosureName, size: size).map {
                ("N=\(sizeLabel(size))", $0.ratioToRaw ?? .nan)
            }
        }
        if !ratios.isEmpty {
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: "≤ 0.3× RAW at N ≥ 100",
                    measured: ScenarioReport.list(ratios), met: ratios.allSatisfy { printedFigure($0.1) <= 0.3 }))
        }
        return report
    }
}
