import Foundation
import Glibc
import ObserverSwift

extension Scenario {
    /// Heap bytes per registered closure observer at N = 100k, beyond the
    /// closure's own captures; weak-target and protocol-typed observers are
    /// shown next to their baselines (WEAK, FLOWDUINO).
    ///
    /// Method: glibc's `mallinfo2()` (bytes in chunks in use, `uordblks`,
    /// plus mmapped chunks, `hblkhd`; allocator overhead included) is read
    /// before and after N subscriptions written the way a user writes them,
    /// `event.subscribe { value in ... }`, after a grace period each time so
    /// that retired slot arrays are freed; the tokens are dropped (a second
    /// figure keeps them). The headline figure uses a closure with no
    /// captures (it reads a global), so nothing needs subtracting; the same
    /// subscription with a closure capturing 16 bytes is shown beside it, and
    /// the difference is what those captures cost. Deterministic: one
    /// measurement, no repetitions. Target: ≤ 48 bytes.
    static let memoryPerObserver = Scenario(
        id: "memory-per-observer", title: "memory per registered closure observer", presentation: .bars,
        defaultSizes: [100_000], quickSizes: [100_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            context.step("N=\(size): \(HeapStatistics.method) before/after registering")
            let sink = Sink()
            func figure(_ implementation: String, _ bytes: Double) {
                report.figures.append(
                    Figure(
                        scenario: context.scenario.id, size: size, implementation: implementation,
                        metric: "bytes/observer", summary: Summary([bytes])))
            }

            var raw = RawSubscriptions()
            figure(
                "RAW",
                bytesPerObserver(size) {
                    for _ in 0..<size { raw.handlers.append { value in memorySink.total &+= value } }
                })
            withExtendedLifetime(raw) {}

            let locked = LockedObservers()
            figure(
                "LOCKED",
                bytesPerObserver(size) {
                    for _ in 0..<size { locked.subscribe { value in memorySink.total &+= value } }
                })

            let event = Event<Int>()
            let eventBytes = bytesPerObserver(size) {
                for _ in 0..<size { _ = event.subscribe { value in memorySink.total &+= value } }
            }
            figure(Contender.eventClosureName, eventBytes)
            event.unsubscribeAll()

            let capturingEvent = Event<Int>()
            let capturingBytes = bytesPerObserver(size) {
                for tag in 0..<size { _ = capturingEvent.subscribe { value in sink.total &+= value ^ tag } }
            }
            figure("\(Contender.eventClosureName), closure capturing 16 bytes", capturingBytes)
            capturingEvent.unsubscribeAll()

            let tokenEvent = Event<Int>()
            var tokens = [Subscription]()
            tokens.reserveCapacity(size)
            let tokenBytes = bytesPerObserver(size) {
                for _ in 0..<size { tokens.append(tokenEvent.subscribe { value in memorySink.total &+= value }) }
            }
            figure("\(Contender.eventClosureName), token kept", tokenBytes)
            for token in tokens { token.cancel() }

            let center = NotificationCenter()
            let name = Notification.Name("observer-bench.memory")
            var observers = [NSObjectProtocol]()
            observers.reserveCapacity(size)
            figure(
                Contender.notificationCenterName,
                bytesPerObserver(size) {
                    for _ in 0..<size {
                        observers.append(
                            center.addObserver(forName: name, object: nil, queue: nil) { note in
                                memorySink.total &+= note.userInfo?["value"] as? Int ?? 0
                            })
                    }
                })
            for observer in observers { center.removeObserver(observer) }
            try? ObserverCore.reclaimNow()

            // Weak-target and protocol-typed observers, next to their baselines.
            // Each holds its own targets, allocated before measuring: only the
            // registration is counted (a weak reference's side table included).
            let weakTargets = (0..<size).map { _ in Target() }
            let weak = WeakObservers<Target>()
            figure(
                "WEAK",
                bytesPerObserver(size) {
                    for target in weakTargets { weak.subscribe(target) { target, value in target.total &+= value } }
                })
            let eventTargets = (0..<size).map { _ in Target() }
            let targetEvent = Event<Int>()
            figure(
                Contender.eventTargetName,
                bytesPerObserver(size) {
                    for target in eventTargets {
                        targetEvent.subscribe(target) { target, value in target.total &+= value }
                    }
                })
            targetEvent.unsubscribeAll()
            let flowduinoTargets = (0..<size).map { _ in Target() }
            let flowduino = FlowduinoObservers()
            figure(
                "FLOWDUINO",
                bytesPerObserver(size) {
                    for target in flowduinoTargets { flowduino.addObserver(target) }
                })
            let registryTargets = (0..<size).map { _ in Target() }
            let observable = ObservableClass()
            observable.withObservers { (_: IntObserving) in }
            figure(
                "\(Contender.registryPairName) (protocol-typed, one protocol used)",
                bytesPerObserver(size) {
                    for target in registryTargets { observable.addObserver(target) }
                    // Stored in the protocol's list by the next withObservers.
                    observable.withObservers { (_: IntObserving) in }
                })
            observable.removeAllObservers()
            withExtendedLifetime((weakTargets, eventTargets, flowduinoTargets, registryTargets)) {}

            report.setRatios(size: size, reference: "RAW")
            Verification.expect(sink.total &+ memorySink.total, equals: 0, "memory scenario: nothing was sent")
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id,
                    target: "≤ 48 bytes per closure observer beyond its captures (N=\(sizeLabel(size)))",
                    measured: "\(formatFigure(eventBytes)) bytes by \(HeapStatistics.method); token kept "
                        + "\(formatFigure(tokenBytes)); with 16 bytes of captures \(formatFigure(capturingBytes))",
                    met: eventBytes <= 48))
        }
        return report
    }
}

/// What the no-capture closures of the memory scenario write to.
let memorySink = Sink()

/// RAW for memory: a plain growing array of closures.
struct RawSubscriptions {
    var handlers: [(Int) -> Void] = []
}

/// Bytes in use in the heap: chunks in use plus mmapped chunks (glibc's
/// `mallinfo2().uordblks + .hblkhd`), or the resident set size where
/// `mallinfo2` cannot be called.
func heapBytesInUse() -> Int {
    HeapStatistics.bytesInUse()
}

/// How heap use is read. Swift's Glibc module does not import <malloc.h>, so
/// `mallinfo2` is looked up with `dlsym` and called through its x86-64 SysV
/// ABI: a function returning a struct in memory takes the result's address as
/// a hidden first argument (and returns it), which is exactly the signature
/// `(UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?`. Elsewhere the
/// resident set size from /proc/self/statm stands in (page granularity,
/// blind to freed holes: coarser).
enum HeapStatistics {
    typealias MallInfo2 = @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?

    static let method: String = {
        #if arch(x86_64)
            if mallinfo2 != nil { return "mallinfo2 (uordblks + hblkhd)" }
        #endif
        return "resident set size (/proc/self/statm)"
    }()

    private static let mallinfo2: MallInfo2? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallinfo2") else { return nil }
        return unsafeBitCast(symbol, to: MallInfo2.self)
    }()

    static func bytesInUse() -> Int {
        #if arch(x86_64)
            if let mallinfo2 {
                // struct mallinfo2: ten size_t fields; uordblks is the 8th, hblkhd the 5th.
                var fields = [Int](repeating: 0, count: 10)
                fields.withUnsafeMutableBytes { _ = mallinfo2($0.baseAddress!) }
                return fields[7] + fields[4]
            }
        #endif
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// Heap growth per observer across `register`, after a grace period so that
/// retired slot arrays (and earlier scenarios' boxes) are freed.
func bytesPerObserver(_ count: Int, _ register: () -> Void) -> Double {
    try? ObserverCore.reclaimNow()
    let before = heapBytesInUse()
    register()
    try? ObserverCore.reclaimNow()
    return Double(heapBytesInUse() - before) / Double(count)
}
