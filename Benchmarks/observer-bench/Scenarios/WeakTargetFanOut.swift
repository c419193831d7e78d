extension Scenario {
    /// One send reaching N weakly held targets: `event.subscribe(target) { ... }`
    /// against WEAK (and CAST, the same weak dictionary plus `as? Protocol`).
    /// Target: ≥ 2× faster than WEAK.
    static let weakTargetFanOut = Scenario(
        id: "weak-target-fan-out", title: "weak-target fan-out", presentation: .fanOut,
        defaultSizes: [1, 10, 100, 1_000, 10_000, 100_000], quickSizes: [1, 100, 10_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let sink = Sink()
            let targets = (0..<size).map { _ in Target() }
            report.figures += context.measure(
                size: size, metric: "ns/delivery",
                [
                    .raw(count: size, sink: sink),
                    .weak(targets: targets),
                    .cast(targets: targets),
                    .eventTargets(targets),
                ])
            report.setRatiosToFastestRaw(size: size)
            withExtendedLifetime(targets) {}
        }
        let speedups = context.sizes.compactMap { size -> (String, Double)? in
            guard let weak = report.figure("WEAK", size: size),
                let event = report.figure(Contender.eventTargetName, size: size)
            else { return nil }
            return ("N=\(sizeLabel(size))", weak.median / event.median)
        }
        report.verdicts.append(
            Verdict(
                scenario: context.scenario.id, target: "≥ 2× faster than WEAK",
                measured: ScenarioReport.list(speedups), met: speedups.allSatisfy { $0.1 >= 2.0 }))
        return report
    }
}
