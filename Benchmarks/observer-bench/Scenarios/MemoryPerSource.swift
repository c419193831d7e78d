import Foundation
import ObserverSwift
import ObserverSwiftCompat

extension Scenario {
    /// Heap bytes per source (an `Event<Int>`, an `ObservableValue<Int>`, a
    /// `KeyedEvent<Int, Int>`, an `ObservableClass`) with N closure
    /// subscribers each (N = 0 and 1; for `ObservableClass`, N registered
    /// observers), beside LOCKED (a mutex and an array of closures).
    ///
    /// Method: as `memory-per-observer`, the heap's bytes in use
    /// (`HeapProbe`: `mallinfo2()` on Linux) before and after making 100 000
    /// sources with their subscribers, after a grace period each time; the
    /// array holding the sources is reserved before the first read, so only
    /// the sources and what they allocate are counted. Closures capture
    /// nothing (they add to a global); tokens are dropped, but for one more
    /// figure at N = 1, a `KeyedEvent` with one key whose token is kept (in
    /// an array also reserved before; target ≤ 256 bytes); an
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
            func figure(_ implementation: String, _ make: () -> AnyObject) {
                var kept: [AnyObject] = []
                kept.reserveCapacity(sources)
                let bytes = probe.bytesPerObserver(sources) {
                    for _ in 0..<sources { kept.append(make()) }
                }
                withExtendedLifetime(kept) {}
                measured[implementation, default: [:]][size] = bytes
                report.figures.append(
                    Figure(
                        scenario: context.scenario.id, size: size, implementation: implementation,
                        metric: "bytes/source", summary: Summary([bytes])))
            }
            figure("LOCKED") {
                let locked = LockedObservers()
                for _ in 0..<size { locked.subscribe { value in memorySink.total &+= value } }
                return locked
            }
            figure(Contender.eventClosureName) {
                let event = Event<Int>()
                for _ in 0..<size { _ = event.subscribe { value in memorySink.total &+= value } }
                return event
            }
            figure(Contender.valueName) {
                let value = ObservableValue(0)
                for _ in 0..<size { _ = value.subscribe { value in memorySink.total &+= value } }
                return value
            }
            figure(Contender.keyedEventName) {
                let keyed = KeyedEvent<Int, Int>()
                for _ in 0..<size { _ = keyed.subscribe(key: 0) { value in memorySink.total &+= value } }
                return keyed
            }
            // The shape an app keeps: the source and its one key's token
            // (kept in an array reserved before measuring).
            if size == 1 {
                var tokens: [Subscription] = []
                tokens.reserveCapacity(sources)
                figure(Contender.keyedTokenKeptName) {
                    let keyed = KeyedEvent<Int, Int>()
                    tokens.append(keyed.subscribe(key: 0) { value in memorySink.total &+= value })
                    return keyed
                }
                withExtendedLifetime(tokens) {}
            }
            figure(Contender.registryPairName) {
                let observable = ObservableClass()
                for _ in 0..<size { observable.addObserver(observer) }
                return observable
            }
            report.setRatios(size: size, reference: "LOCKED")
        }
        withExtendedLifetime(observer) {}
        Verification.expect(memorySink.total, equals: 0, "memory-per-source: nothing was sent")
        let goals: [(String, Int, Double)] = [
            (Contender.eventClosureName, 0, 48), (Contender.eventClosureName, 1, 160),
            (Contender.valueName, 0, 96), (Contender.keyedEventName, 0, 96), (Contender.registryPairName, 0, 64),
            (Contender.keyedTokenKeptName, 1, 256),
        ]
        for (implementation, size, goal) in goals {
            guard let bytes = measured[implementation]?[size] else { continue }
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id,
                    target: "\(implementation) with \(size) closure subscriber\(size == 1 ? "" : "s") "
                        + "≤ \(formatFigure(goal)) bytes",
                    // Two decimals: a fixed cost spread over the sources (type metadata made
                    // by the first one) shows here, and a figure a hair above the goal reads so.
                    measured: "\(String(format: "%.2f", bytes)) bytes by \(probe.method)", met: bytes <= goal))
        }
        return report
    }
}

extension Contender {
    static let valueName = "ObserverSwift ObservableValue"
    static let keyedTokenKeptName = "ObserverSwift KeyedEvent, one key, token kept"
    static let keyedOneKeyName = "ObserverSwift KeyedEvent, one key"
}
