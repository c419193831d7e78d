extension Scenario {
    /// One send reaching N weakly held targets: `event.subscribe(target) { ... }`
    /// against WEAK (and CAST, the same weak dictionary plus `as? Protocol`).
    /// Target: ≥ 2× faster than WEAK.
    ///
    /// Each contender holds its own targets, as a user's objects are held by
    /// one mechanism: a `weak` reference to an object (WEAK's, CAST's) gives it
    /// a side table, and every later retain of it takes the runtime's slow
    /// path. The last contender subscribes WEAK's targets, so the figure for
    /// objects that something else also references weakly is measured too.
    static let weakTargetFanOut = Scenario(
        id: "weak-target-fan-out", title: "weak-target fan-out", presentation: .fanOut,
        defaultSizes: [1, 10, 100, 1_000, 10_000, 100_000], quickSizes: [1, 100, 10_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let sink = Sink()
            let weakTargets = (0..<size).map { _ in Target() }
            let castTargets = (0..<size).map { _ in Target() }
            let eventTargets = (0..<size).map { _ in Target() }
            report.figures += context.measure(
                size: size, metric: "ns/delivery",
                [
                    .raw(count: size, sink: sink),
                    .weak(targets: weakTargets),
                    .cast(targets: castTargets),
                    .eventTargets(eventTargets),
                    .eventTargets(weakTargets, implementation: Contender.eventWeaklyReferencedTargetName),
                ])
            report.setRatiosToFastestRaw(size: size)
            withExtendedLifetime((weakTargets, castTargets, eventTargets)) {}
        }
        for (implementation, targetsHeld) in [
            (Contender.eventTargetName, ""),
            (Contender.eventWeaklyReferencedTargetName, ", targets WEAK also references"),
        ] {
            let speedups = context.sizes.compactMap { size -> (String, Double)? in
                guard let weak = report.figure("WEAK", size: size),
                    let event = report.figure(implementation, size: size)
                else { return nil }
                return ("N=\(sizeLabel(size))", weak.median / event.median)
            }
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: "≥ 2× faster than WEAK\(targetsHeld)",
                    measured: ScenarioReport.list(speedups), met: speedups.allSatisfy { printedFigure($0.1) >= 2.0 }))
        }
        return report
    }
}
