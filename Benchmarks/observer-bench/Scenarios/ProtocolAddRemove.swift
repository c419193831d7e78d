import ObserverSwift
import ObserverSwiftCompat

extension Scenario {
    /// `addObserver` + `removeObserver` of one protocol-typed observer with N
    /// already registered (and the registry's protocol view made by an
    /// earlier `withObservers`), against FLOWDUINO (a locked dictionary of
    /// weak references), in ns per pair. Every removal is checked. Target:
    /// ≤ 0.5× FLOWDUINO at both sizes, flat in N.
    ///
    /// ObserverSwift stores an added observer in its protocol views at the
    /// next `withObservers`; "add + withObservers + remove" puts one
    /// `withObservers` for a protocol nobody conforms to between the two, so
    /// the pair includes that work (the casts into every view).
    static let protocolAddRemove = Scenario(
        id: "protocol-add-remove", title: "protocol-typed addObserver + removeObserver", presentation: .bars,
        defaultSizes: [1_000, 100_000], quickSizes: [1_000, 100_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let flowduinoTargets = (0..<size).map { _ in Target() }
            let registryTargets = (0..<size).map { _ in Target() }
            report.figures += context.measure(
                size: size, metric: "ns/pair",
                [
                    .flowduinoPairs(registered: flowduinoTargets),
                    .registryPairs(registered: registryTargets),
                    .registryPairs(registered: registryTargets, sendingBetween: true),
                ])
            report.setRatios(size: size, reference: "FLOWDUINO")
            withExtendedLifetime((flowduinoTargets, registryTargets)) {}
        }
        let ratios = context.sizes.compactMap { size in
            report.figure(Contender.registryPairName, size: size).map {
                ("N=\(sizeLabel(size))", $0.ratioToRaw ?? .nan)
            }
        }
        if !ratios.isEmpty {
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: "add + remove ≤ 0.5× FLOWDUINO (N=1k, 100k)",
                    measured: ScenarioReport.list(ratios), met: ratios.allSatisfy { printedFigure($0.1) <= 0.5 }))
        }
        let pairs = context.sizes.compactMap { size in report.figure(Contender.registryPairName, size: size)?.median }
        if pairs.count == 2 {
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: "add + remove flat in N: 100k ≤ 1.5× 1k",
                    measured: "\(formatFigure(pairs[1] / pairs[0]))×", met: printedFigure(pairs[1] / pairs[0]) <= 1.5))
        }
        return report
    }
}

extension Contender {
    static let registryPairName = "ObserverSwift ObservableClass"

    /// FLOWDUINO pairs: `send(k)` adds and removes a newcomer k times and
    /// adds the pair's number to the checksum when the removal found it.
    static func flowduinoPairs(registered targets: [Target]) -> Contender {
        let observers = FlowduinoObservers()
        for target in targets { observers.addObserver(target) }
        let newcomer = Target()
        let sink = Sink()
        return Contender(
            implementation: "FLOWDUINO", deliveriesPerSend: 1,
            send: { pairs in
                for value in stride(from: 1, through: pairs, by: 1) {
                    observers.addObserver(newcomer)
                    if observers.removeObserver(newcomer) { sink.total &+= value }
                }
            },
            checksum: { sink.total })
    }

    /// The same pairs on an `ObservableClass` whose `IntObserving` view
    /// exists; with `sendingBetween`, a `withObservers` for a protocol no
    /// target conforms to runs between add and remove.
    static func registryPairs(registered targets: [Target], sendingBetween: Bool = false) -> Contender {
        let observable = ObservableClass()
        for target in targets { observable.addObserver(target) }
        observable.withObservers { (_: IntObserving) in }
        observable.withObservers { (_: UnobservedProtocol) in }
        let newcomer = Target()
        let sink = Sink()
        return Contender(
            implementation: registryPairName + (sendingBetween ? ", add + withObservers + remove" : ""),
            deliveriesPerSend: 1,
            send: { pairs in
                for value in stride(from: 1, through: pairs, by: 1) {
                    observable.addObserver(newcomer)
                    if sendingBetween { observable.withObservers { (_: UnobservedProtocol) in } }
                    if observable.removeObserver(newcomer) { sink.total &+= value }
                }
            },
            checksum: { sink.total },
            tearDown: {
                let live = observable.observerCount
                if live != targets.count {
                    Verification.fail("protocol-add-remove: \(live) observers left, expected \(targets.count)")
                }
                observable.removeAllObservers()
            })
    }
}

/// A protocol no benchmark target conforms to.
protocol UnobservedProtocol: AnyObject {}
