@_spi(EngineDiagnostics) import ObserverSwift

/// An `Event<Int>` after N closure subscriptions (1 000 000 by default,
/// 100 000 with `--quick`) of which all but the last were cancelled, first
/// to last, so that the survivor was added in the highest slot.
private func eventWithLastSurvivor(of subscriptions: Int, sink: Sink) -> (Event<Int>, Subscription) {
    let event = Event<Int>()
    var tokens: [Subscription] = []
    tokens.reserveCapacity(subscriptions - 1)
    for _ in 1..<subscriptions { tokens.append(event.subscribe { _ in }) }
    let survivor = event.subscribe { value in sink.total &+= value }
    for token in tokens { token.cancel() }
    return (event, survivor)
}

extension Contender {
    static let shrinkSurvivorName = "ObserverSwift Event, last of N (after N − 1 cancels)"
    static let shrinkFreshName = "ObserverSwift Event, one subscriber"
}

extension Scenario {
    /// The cliff after a mass cancel, memory: the heap bytes an `Event` and
    /// its one remaining subscription hold after all but the last of N subscriptions
    /// were cancelled, beside the same measurement for an `Event` that only
    /// ever had that one subscriber (the same run's baseline, per event over
    /// 100 000 such events). Method: the heap's bytes in use (`HeapProbe`)
    /// before making the event and after the cancels, each after a grace
    /// period (so retired slot arrays are freed), with the cancelled tokens'
    /// array freed; median of three runs. Goal: ≤ 64 KiB held.
    static let shrinkMemory = Scenario(
        id: "shrink-memory", title: "memory held after all but one of N subscriptions cancel", presentation: .bars,
        defaultSizes: [1_000_000], quickSizes: [100_000]
    ) { context in
        var report = ScenarioReport()
        guard let probe = HeapProbe.current else {
            context.step("no heap probe works on this platform: memory held not measured")
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: "≤ 64 KiB held",
                    measured: "not measured: no heap probe works on this platform", met: false))
            return report
        }
        for size in context.sizes {
            context.step("N=\(size): \(probe.method), median of 3 runs")
            let sink = Sink()
            defer { Verification.expect(sink.total, equals: 0, "shrink-memory: nothing was sent") }
            func held(_ make: () -> [AnyObject]) -> Double {
                try? ObserverCore.reclaimNow()
                let before = probe.bytesInUse()
                let kept = make()
                try? ObserverCore.reclaimNow()
                let bytes = Double(probe.bytesInUse() - before)
                withExtendedLifetime(kept) {}
                return bytes
            }
            let survivor = (0..<3).map { _ in
                held {
                    let (event, token) = eventWithLastSurvivor(of: size, sink: sink)
                    return [event, token]
                }
            }
            // One small event is below the probe's resolution (glibc's
            // per-thread caches hold freed chunks that still count as in
            // use): the baseline is the bytes per event over 100 000.
            let events = 100_000
            var kept: [AnyObject] = []
            kept.reserveCapacity(2 * events)  // before measuring: the array is not counted
            let fresh = (0..<3).map { _ in
                let bytes = held {
                    for _ in 0..<events {
                        let event = Event<Int>()
                        kept.append(event.subscribe { value in sink.total &+= value })
                        kept.append(event)
                    }
                    return []
                }
                kept.removeAll(keepingCapacity: true)
                return bytes / Double(events)
            }
            for (implementation, samples) in [
                (Contender.shrinkSurvivorName, survivor), (Contender.shrinkFreshName, fresh),
            ] {
                report.figures.append(
                    Figure(
                        scenario: context.scenario.id, size: size, implementation: implementation,
                        metric: "bytes held", summary: Summary(samples)))
            }
            report.setRatios(size: size, reference: Contender.shrinkFreshName)
            if let figure = report.figure(Contender.shrinkSurvivorName, size: size),
                let baseline = report.figure(Contender.shrinkFreshName, size: size)
            {
                report.verdicts.append(
                    Verdict(
                        scenario: context.scenario.id, target: "after N − 1 of N = \(size) cancel: ≤ 64 KiB held",
                        measured:
                            "\(formatFigure(figure.median)) bytes by \(probe.method) "
                            + "(one-subscriber Event \(formatFigure(baseline.median)) bytes)",
                        met: printedFigure(figure.median) <= 64 * 1024))
            }
        }
        return report
    }

    /// The cliff after a mass cancel, time: a send to the one survivor of N
    /// subscriptions (all but the last cancelled), beside a send to an
    /// `Event` that only ever had one subscriber and RAW with one closure,
    /// interleaved in the same run (ns per send, median of the
    /// repetitions). Goal: ≤ 50 ns.
    static let shrinkSend = Scenario(
        id: "shrink-send", title: "send to the survivor of N subscriptions", presentation: .bars,
        defaultSizes: [1_000_000], quickSizes: [100_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            context.step("N=\(size): subscribing \(size), cancelling \(size - 1)")
            let sink = Sink()
            let (event, survivor) = eventWithLastSurvivor(of: size, sink: sink)
            let survivorContender = Contender(
                implementation: Contender.shrinkSurvivorName, deliveriesPerSend: 1,
                send: { sends in eventSend(event, sends: sends) },
                checksum: { sink.total },
                tearDown: {
                    survivor.cancel()
                    event.unsubscribeAll()
                })
            let freshSink = Sink()
            let fresh = Contender.eventClosures(count: 1, sink: freshSink)
            report.figures += context.measure(
                size: size, metric: "ns/send",
                [
                    .raw(count: 1, sink: Sink()),
                    Contender(
                        implementation: Contender.shrinkFreshName, deliveriesPerSend: 1, send: fresh.send,
                        checksum: fresh.checksum, tearDown: fresh.tearDown),
                    survivorContender,
                ])
            report.setRatios(size: size, reference: "RAW")
            if let figure = report.figure(Contender.shrinkSurvivorName, size: size),
                let baseline = report.figure(Contender.shrinkFreshName, size: size)
            {
                report.verdicts.append(
                    Verdict(
                        scenario: context.scenario.id, target: "after N − 1 of N = \(size) cancel: send ≤ 50 ns",
                        measured:
                            "\(formatFigure(figure.median)) ns (p10 \(formatFigure(figure.p10)); "
                            + "one-subscriber Event \(formatFigure(baseline.median)) ns)",
                        met: printedFigure(figure.median) <= 50))
            }
        }
        return report
    }
}
