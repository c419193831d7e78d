import ObserverSwift
import ObserverSwiftCompat

extension Scenario {
    /// `withObservers { (observer: IntObserving) in ... }` over N registered
    /// observers, against CAST (weak references and `as?` per observer per
    /// call, Flowduino's loop). Target: ≥ 5× faster than CAST at N = 1k.
    ///
    /// Each contender holds its own targets: a `weak` reference to an object
    /// (CAST's) moves every retain of that object onto the runtime's slow
    /// side-table path, which would tax the other contender too.
    static let protocolFanOut = Scenario(
        id: "protocol-fan-out", title: "protocol-typed fan-out (withObservers)", presentation: .bars,
        defaultSizes: [1_000], quickSizes: [1_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let castTargets = (0..<size).map { _ in Target() }
            let registryTargets = (0..<size).map { _ in Target() }
            report.figures += context.measure(
                size: size, metric: "ns/delivery",
                [
                    .raw(count: size, sink: Sink()),
                    .cast(targets: castTargets),
                    .protocolObservers(registryTargets),
                ])
            report.setRatios(size: size, reference: "RAW")
            if let cast = report.figure("CAST", size: size),
                let registry = report.figure(Contender.protocolObserversName, size: size)
            {
                let speedup = cast.median / registry.median
                report.verdicts.append(
                    Verdict(
                        scenario: context.scenario.id, target: "≥ 5× faster than CAST (N=\(sizeLabel(size)))",
                        measured:
                            "\(formatFigure(speedup))× (\(formatFigure(cast.median)) vs \(formatFigure(registry.median)) ns/delivery)",
                        met: printedFigure(speedup) >= 5))
            }
            withExtendedLifetime((castTargets, registryTargets)) {}
        }
        return report
    }
}

extension Contender {
    static let protocolObserversName = "ObserverSwift withObservers"

    /// An `ObservableClass` with every target added as an observer.
    static func protocolObservers(_ targets: [Target]) -> Contender {
        let observable = ObservableClass()
        for target in targets { observable.addObserver(target) }
        return Contender(
            implementation: protocolObserversName, deliveriesPerSend: targets.count,
            send: { sends in protocolSend(observable, sends: sends) },
            checksum: { targetsTotal(targets) },
            tearDown: { observable.removeAllObservers() })
    }
}

@inline(never)
func protocolSend(_ observable: ObservableClass, sends: Int) {
    for value in stride(from: 1, through: sends, by: 1) {
        observable.withObservers { (observer: IntObserving) in observer.observe(value) }
    }
}
