import ObserverSwift
import Synchronization

extension Scenario {
    /// A send to one key of a `KeyedEvent` holding K keys with one observer
    /// each (K = 1M by default, 100k with --quick), against a dictionary of
    /// closure arrays behind a `Mutex` (what a hand-written keyed observer
    /// does). Target: ≤ 60 ns per send at 1M keys. `size` is the key count;
    /// each send delivers to one observer.
    static let keyedSend = Scenario(
        id: "keyed-send", title: "keyed send, one key among K keys", presentation: .bars,
        defaultSizes: [1_000_000], quickSizes: [100_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let sink = Sink()
            report.figures += context.measure(
                size: size, metric: "ns/send",
                [
                    .raw(count: 1, sink: sink),
                    .lockedDictionary(keys: size, sink: sink),
                    .keyedEvent(keys: size, sink: sink),
                ])
            report.setRatios(size: size, reference: "RAW")
            if let keyed = report.figure(Contender.keyedEventName, size: size) {
                report.verdicts.append(
                    Verdict(
                        scenario: context.scenario.id, target: "≤ 60 ns per send (\(sizeLabel(size)) keys)",
                        measured: "\(formatFigure(keyed.median)) ns (p10 \(formatFigure(keyed.p10)))",
                        met: printedFigure(keyed.median) <= 60))
                if let locked = report.figure("LOCKED [key: [closure]]", size: size) {
                    let speedup = locked.median / keyed.median
                    report.verdicts.append(
                        Verdict(
                            scenario: context.scenario.id,
                            target: "≥ 1.5× faster than LOCKED [key: [closure]] (\(sizeLabel(size)) keys)",
                            measured:
                                "\(formatFigure(speedup))× (\(formatFigure(locked.median)) vs \(formatFigure(keyed.median)) ns)",
                            met: printedFigure(speedup) >= 1.5))
                }
            }
        }
        return report
    }
}

/// A hand-written keyed observer: `[key: [closure]]` behind a `Mutex`,
/// copied out under the lock and called outside it.
final class LockedKeyedObservers: Sendable {
    /// `@unchecked Sendable`: only touched under the mutex.
    struct State: @unchecked Sendable {
        var handlers: [Int: [(Int) -> Void]] = [:]
    }

    private let state = Mutex(State())

    func subscribe(key: Int, _ handler: @escaping (Int) -> Void) {
        let handler = UncheckedSendableBox(handler)
        state.withLock { $0.handlers[key, default: []].append(handler.value) }
    }

    @inline(__always)
    func send(_ value: Int, forKey key: Int) {
        let handlers = state.withLock { $0.handlers[key] }
        guard let handlers else { return }
        for handler in handlers { handler(value) }
    }
}

extension Contender {
    static let keyedEventName = "ObserverSwift KeyedEvent"
    /// The key every send goes to: one in the middle of the key range.
    static func hotKey(among keys: Int) -> Int { keys / 2 }

    static func lockedDictionary(keys: Int, sink: Sink) -> Contender {
        let observers = LockedKeyedObservers()
        for key in 0..<keys { observers.subscribe(key: key) { value in sink.total &+= value } }
        let hot = hotKey(among: keys)
        return Contender(
            implementation: "LOCKED [key: [closure]]", deliveriesPerSend: 1,
            send: { sends in lockedKeyedSend(observers, key: hot, sends: sends) },
            checksum: { sink.total })
    }

    static func keyedEvent(keys: Int, sink: Sink) -> Contender {
        let event = KeyedEvent<Int, Int>()
        for key in 0..<keys { _ = event.subscribe(key: key) { value in sink.total &+= value } }
        let hot = hotKey(among: keys)
        return Contender(
            implementation: keyedEventName, deliveriesPerSend: 1,
            send: { sends in keyedEventSend(event, key: hot, sends: sends) },
            checksum: { sink.total },
            tearDown: { event.unsubscribeAll() })
    }
}

extension Contender {
    /// A `KeyedEvent<Int, Int>` with one weak-target subscription per key,
    /// all for one target; a send goes to one key.
    static func keyedTargets(keys: Int, sink: Sink) -> Contender {
        let event = KeyedEvent<Int, Int>()
        let target = Target()
        for key in 0..<keys { event.subscribe(target, key: key) { _, value in sink.total &+= value } }
        let hot = hotKey(among: keys)
        return Contender(
            implementation: keyedEventName + " (weak target)", deliveriesPerSend: 1,
            send: { sends in keyedEventSend(event, key: hot, sends: sends) },
            checksum: { sink.total },
            tearDown: { withExtendedLifetime(target) { _ = event.unsubscribeAll() } })
    }
}

@inline(never)
func lockedKeyedSend(_ observers: LockedKeyedObservers, key: Int, sends: Int) {
    for value in stride(from: 1, through: sends, by: 1) {
        observers.send(value, forKey: key)
    }
}

@inline(never)
func keyedEventSend(_ event: KeyedEvent<Int, Int>, key: Int, sends: Int) {
    for value in stride(from: 1, through: sends, by: 1) {
        event.send(value, forKey: key)
    }
}
