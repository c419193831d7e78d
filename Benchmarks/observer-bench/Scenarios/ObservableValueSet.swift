import ObserverSwift

extension Scenario {
    /// Setting an `ObservableValue` with N closure observers against an
    /// `Event.send` to N closures, in ns per set (one set = one send).
    /// Target: a set ≤ 1.2× the send at N = 1 and N = 100.
    static let observableValueSet = Scenario(
        id: "value-set", title: "ObservableValue set against Event.send", presentation: .bars,
        defaultSizes: [1, 100], quickSizes: [1, 100]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let sink = Sink()
            report.figures += context.measure(
                size: size, metric: "ns/set",
                [
                    .raw(count: size, sink: sink),
                    .eventClosures(count: size, sink: sink),
                    .valueObservers(count: size, sink: sink),
                ]
            ).map { figure in
                // Per set, not per delivery: the send's fixed cost is the point.
                var figure = figure
                figure.scaleForPerSend(size)
                return figure
            }
            report.setRatios(size: size, reference: Contender.eventClosureName)
        }
        let ratios = context.sizes.compactMap { size in
            report.figure(Contender.valueSetName, size: size).map { ("N=\(sizeLabel(size))", $0.ratioToRaw ?? .nan) }
        }
        if !ratios.isEmpty {
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: "set ≤ 1.2× Event.send to the same N closures (N=1, 100)",
                    measured: ScenarioReport.list(ratios), met: ratios.allSatisfy { printedFigure($0.1) <= 1.2 }))
        }
        return report
    }
}

extension Contender {
    static let valueSetName = "ObserverSwift ObservableValue set"

    /// An `ObservableValue<Int>` with `count` closure observers capturing `sink`.
    static func valueObservers(count: Int, sink: Sink) -> Contender {
        let value = ObservableValue(0)
        for _ in 0..<count { _ = value.subscribe { value in sink.total &+= value } }
        return Contender(
            implementation: valueSetName, deliveriesPerSend: count,
            send: { sets in valueSet(value, sets: sets) },
            checksum: { sink.total },
            tearDown: { value.unsubscribeAll() })
    }
}

extension Contender {
    static let valueReadName = "ObserverSwift ObservableValue read"

    /// Reads of an `ObservableValue<Int>` holding 1 that has `observers`
    /// closure observers; each read adds `value × i` to `sink` for the i-th read.
    static func valueReads(observers: Int, sink: Sink) -> Contender {
        let value = ObservableValue(1)
        for _ in 0..<observers { _ = value.subscribe { value in sink.total &+= value } }
        return Contender(
            implementation: valueReadName, deliveriesPerSend: 1,
            send: { reads in valueRead(value, reads: reads, sink: sink) },
            checksum: { sink.total },
            tearDown: { value.unsubscribeAll() })
    }
}

@inline(never)
func valueRead(_ value: ObservableValue<Int>, reads: Int, sink: Sink) {
    for next in stride(from: 1, through: reads, by: 1) {
        sink.total &+= value.value &* next
    }
}

@inline(never)
func valueSet(_ value: ObservableValue<Int>, sets: Int) {
    for next in stride(from: 1, through: sets, by: 1) {
        value.value = next
    }
}

extension Figure {
    /// Turns a per-delivery figure of a send reaching `deliveries` observers
    /// into a per-send one.
    mutating func scaleForPerSend(_ deliveries: Int) {
        let factor = Double(max(deliveries, 1))
        median *= factor
        p10 *= factor
        p90 *= factor
    }
}
