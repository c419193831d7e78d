import Foundation
import ObserverSwift
import ObserverSwiftCompat

extension Scenario {
    /// Heap bytes per source (an `Event<Int>`, an `ObservableValue<Int>`, a
    /// `KeyedEvent<Int, Int>`, an `ObservableClass`, an `ObserverRegistry`)
    /// with N closure subscribers each (N = 0 and 1; for `ObservableClass`
    /// and `ObserverRegistry`, N registered observers), beside LOCKED (a
    /// mutex and an array of closures). The registry is shown as added to
    /// (what an observable pays until it first notifies) and after one
    /// `withObservers` (its protocol's list made, the observer stored).
    ///
    /// Method: as `memory-per-observer`, the heap's bytes in use
    /// (`HeapProbe`: `mallinfo2()` on Linux) before and after making 100 000
    /// sources with their subscribers, after a grace period each time; the
    /// array holding the sources is reserved before the first read, so only
    /// the sources and what they allocate are counted. Closures capture
    /// nothing (they add to a global); tokens are dropped, and kept in the
    /// ", token kept" rows (in an array reserved before the first read, so
    /// a row counts the token objects, not the array); an
    /// `ObservableClass`'s observer is one object shared by every source,
    /// allocated before measuring. Deterministic: one measurement each.
    static let memoryPerSource = Scenario(
        id: "memory-per-source", title: "memory per source (empty, one closure subscriber)", presentation: .bars,
        defaultSizes: [0, 1], quickSizes: [0, 1]
    ) { context in
        var report = ScenarioReport()
        let sources = 100_000
        guard let probe = HeapProbe.current else {
            context.step("no heap probe works on this platform: memory per source not measured")
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: "bytes per source",
                    measured: "not measured: no heap probe works on this platform", met: false))
            return report
        }
        let observer = Target()
        var measured: [String: [Int: Double]] = [:]
        for size in context.sizes {
            context.step("N=\(size): \(probe.method), \(sources) sources")
            func figure(_ implementation: String, _ make: (inout [Subscription]) -> AnyObject) {
                var kept: [AnyObject] = []
                kept.reserveCapacity(sources)
                var tokens: [Subscription] = []
                tokens.reserveCapacity(sources * max(size, 1))
                let bytes = probe.bytesPerObserver(sources) {
                    for _ in 0..<sources { kept.append(make(&tokens)) }
                }
                withExtendedLifetime(kept) {}
                withExtendedLifetime(tokens) {}
                measured[implementation, default: [:]][size] = bytes
                report.figures.append(
                    Figure(
                        scenario: context.scenario.id, size: size, implementation: implementation,
                        metric: "bytes/source", summary: Summary([bytes])))
            }
            figure("LOCKED") { _ in
                let locked = LockedObservers()
                for _ in 0..<size { locked.subscribe { value in memorySink.total &+= value } }
                return locked
            }
            for keepsToken in [false, true] {
                let kept = keepsToken ? Contender.tokenKeptSuffix : ""
                figure(Contender.eventClosureName + kept) { tokens in
                    let event = Event<Int>()
                    for _ in 0..<size {
                        let token = event.subscribe { value in memorySink.total &+= value }
                        if keepsToken { tokens.append(token) }
                    }
                    return event
                }
                figure(Contender.valueName + kept) { tokens in
                    let value = ObservableValue(0)
                    for _ in 0..<size {
                        let token = value.subscribe { value in memorySink.total &+= value }
                        if keepsToken { tokens.append(token) }
                    }
                    return value
                }
                figure(Contender.keyedEventName + kept) { tokens in
                    let keyed = KeyedEvent<Int, Int>()
                    for _ in 0..<size {
                        let token = keyed.subscribe(key: 0) { value in memorySink.total &+= value }
                        if keepsToken { tokens.append(token) }
                    }
                    return keyed
                }
            }
            figure(Contender.registryPairName) { _ in
                let observable = ObservableClass()
                for _ in 0..<size { observable.addObserver(observer) }
                return observable
            }
            figure(Contender.registryName) { _ in
                let registry = ObserverRegistry()
                for _ in 0..<size { registry.addObserver(observer) }
                return registry
            }
            figure(Contender.registrySentName) { _ in
                let registry = ObserverRegistry()
                for _ in 0..<size { registry.addObserver(observer) }
                registry.withObservers { (_: IntObserving) in }
                return registry
            }
            report.setRatios(size: size, reference: "LOCKED")
        }
        withExtendedLifetime(observer) {}
        Verification.expect(memorySink.total, equals: 0, "memory-per-source: nothing was sent")
        // The goals for a source with one subscriber and for an empty
        // source. The best peers, measured the same way: SwiftEvents' Event
        // 128 and Observable 176 with one subscriber (no token exists),
        // Flowduino's ObservableClass 192.
        let kept = Contender.tokenKeptSuffix
        let goals: [(String, Int, Double)] = [
            (Contender.eventClosureName, 0, 48), (Contender.eventClosureName, 1, 112),
            (Contender.eventClosureName + kept, 1, 128),
            (Contender.valueName, 0, 96), (Contender.valueName + kept, 1, 176),
            (Contender.keyedEventName, 0, 96), (Contender.keyedEventName + kept, 1, 256),
            (Contender.registryPairName, 0, 64), (Contender.registryPairName, 1, 192),
            // An empty registry ≤ 64 B, one with one observer ≤ 192 B, ≤ 256 B once a
            // `withObservers` has stored it.
            (Contender.registryName, 0, 64), (Contender.registryName, 1, 192), (Contender.registrySentName, 1, 256),
        ]
        for (implementation, size, goal) in goals {
            guard let bytes = measured[implementation]?[size] else { continue }
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id,
                    target: "\(implementation) with \(size) \(subscriberNoun(implementation, size)) "
                        + "≤ \(formatFigure(goal)) bytes",
                    // Two decimals: a fixed cost spread over the sources (type metadata made
                    // by the first one) shows here, and a figure a hair above the goal reads so.
                    measured: "\(formatFixed(bytes, digits: 2)) bytes by \(probe.method)",
                    met: printedFixed(bytes, digits: 2) <= goal))
        }
        return report
    }
}

/// What a source of `implementation` has N of: closure subscribers, or
/// registered observers for the protocol-typed sources.
private func subscriberNoun(_ implementation: String, _ size: Int) -> String {
    let isProtocolTyped = [Contender.registryPairName, Contender.registryName, Contender.registrySentName]
        .contains(implementation)
    return (isProtocolTyped ? "registered observer" : "closure subscriber") + (size == 1 ? "" : "s")
}

extension Contender {
    static let valueName = "ObserverSwift ObservableValue"
    /// Appended to a contender's name in the rows that keep each token.
    static let tokenKeptSuffix = ", token kept"
    static let keyedOneKeyName = "ObserverSwift KeyedEvent, one key"
    static let registryName = "ObserverSwift ObserverRegistry"
    static let registrySentName = "ObserverSwift ObserverRegistry, after a send"
}
