import Foundation
@_spi(EngineDiagnostics) import ObserverSwift
import ObserverSwiftCompat

extension Scenario {
    /// Heap bytes per registered closure observer at N = 100k, beyond the
    /// closure's own captures; weak-target and protocol-typed observers are
    /// shown next to their baselines (WEAK, FLOWDUINO).
    ///
    /// Method: the heap's bytes in use (`HeapProbe`: glibc's `mallinfo2()`
    /// on Linux, `malloc_zone_statistics` on Darwin) are read before and
    /// after N subscriptions written the way a user writes them,
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
        let memoryTarget = "≤ 48 bytes per closure observer beyond its captures"
        guard let probe = HeapProbe.current else {
            context.step("no heap probe works on this platform: memory per observer not measured")
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id, target: memoryTarget,
                    measured: "not measured: no heap probe works on this platform", met: false))
            return report
        }
        for size in context.sizes {
            context.step("N=\(size): \(probe.method) before/after registering")
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
                probe.bytesPerObserver(size) {
                    for _ in 0..<size { raw.handlers.append { value in memorySink.total &+= value } }
                })
            withExtendedLifetime(raw) {}

            let locked = LockedObservers()
            figure(
                "LOCKED",
                probe.bytesPerObserver(size) {
                    for _ in 0..<size { locked.subscribe { value in memorySink.total &+= value } }
                })

            let event = Event<Int>()
            let eventBytes = probe.bytesPerObserver(size) {
                for _ in 0..<size { _ = event.subscribe { value in memorySink.total &+= value } }
            }
            figure(Contender.eventClosureName, eventBytes)
            event.unsubscribeAll()

            let capturingEvent = Event<Int>()
            let capturingBytes = probe.bytesPerObserver(size) {
                for tag in 0..<size { _ = capturingEvent.subscribe { value in sink.total &+= value ^ tag } }
            }
            figure("\(Contender.eventClosureName), closure capturing 16 bytes", capturingBytes)
            capturingEvent.unsubscribeAll()

            let tokenEvent = Event<Int>()
            var tokens = [Subscription]()
            tokens.reserveCapacity(size)
            let tokenBytes = probe.bytesPerObserver(size) {
                for _ in 0..<size { tokens.append(tokenEvent.subscribe { value in memorySink.total &+= value }) }
            }
            figure("\(Contender.eventClosureName), token kept", tokenBytes)
            for token in tokens { token.cancel() }

            // KeyedEvent: every observer under one key (its list is one
            // key's), token dropped, then each token in a SubscriptionBag.
            let keyed = KeyedEvent<Int, Int>()
            figure(
                Contender.keyedOneKeyName,
                probe.bytesPerObserver(size) {
                    for _ in 0..<size { _ = keyed.subscribe(key: 0) { value in memorySink.total &+= value } }
                })
            keyed.unsubscribeAll()
            let baggedKeyed = KeyedEvent<Int, Int>()
            let bag = SubscriptionBag()
            figure(
                "\(Contender.keyedOneKeyName), token in a bag",
                probe.bytesPerObserver(size) {
                    for _ in 0..<size {
                        baggedKeyed.subscribe(key: 0) { value in memorySink.total &+= value }.store(in: bag)
                    }
                })
            bag.cancelAll()
            try? ObserverCore.reclaimNow()

            let center = NotificationCenter()
            let name = Notification.Name("observer-bench.memory")
            var observers = [NSObjectProtocol]()
            observers.reserveCapacity(size)
            figure(
                Contender.notificationCenterName,
                probe.bytesPerObserver(size) {
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
                probe.bytesPerObserver(size) {
                    for target in weakTargets { weak.subscribe(target) { target, value in target.total &+= value } }
                })
            let eventTargets = (0..<size).map { _ in Target() }
            let targetEvent = Event<Int>()
            figure(
                Contender.eventTargetName,
                probe.bytesPerObserver(size) {
                    for target in eventTargets {
                        targetEvent.subscribe(target) { target, value in target.total &+= value }
                    }
                })
            targetEvent.unsubscribeAll()
            let flowduinoTargets = (0..<size).map { _ in Target() }
            let flowduino = FlowduinoObservers()
            figure(
                "FLOWDUINO",
                probe.bytesPerObserver(size) {
                    for target in flowduinoTargets { flowduino.addObserver(target) }
                })
            let registryTargets = (0..<size).map { _ in Target() }
            let observable = ObservableClass()
            observable.withObservers { (_: IntObserving) in }
            let protocolTypedBytes = probe.bytesPerObserver(size) {
                for target in registryTargets { observable.addObserver(target) }
                // Stored in the protocol's list by the next withObservers.
                observable.withObservers { (_: IntObserving) in }
            }
            figure("\(Contender.registryPairName) (protocol-typed, one protocol used)", protocolTypedBytes)
            observable.removeAllObservers()
            withExtendedLifetime((weakTargets, eventTargets, flowduinoTargets, registryTargets)) {}

            report.setRatios(size: size, reference: "RAW")
            Verification.expect(sink.total &+ memorySink.total, equals: 0, "memory scenario: nothing was sent")
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id,
                    target: "\(memoryTarget) (N=\(sizeLabel(size)))",
                    measured: "\(formatFigure(eventBytes)) bytes by \(probe.method); token kept "
                        + "\(formatFigure(tokenBytes)); with 16 bytes of captures \(formatFigure(capturingBytes))",
                    met: printedFigure(eventBytes) <= 48))
            // Goal: a protocol-typed observer ≤ 120 bytes (FLOWDUINO's 90.3 B beside it).
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id,
                    target: "≤ 120 bytes per protocol-typed observer, one protocol used (N=\(sizeLabel(size)))",
                    measured: "\(formatFigure(protocolTypedBytes)) bytes by \(probe.method)",
                    met: printedFigure(protocolTypedBytes) <= 120))
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

/// How this process reads the bytes in use in its heap.
struct HeapProbe: Sendable {
    /// What is read, for the report.
    let method: String
    /// The bytes in use now, or nil when the read failed.
    let read: @Sendable () -> Int?

    /// This platform's probe, or nil when none works here (the scenario then
    /// says so and reports no figure).
    static let current: HeapProbe? = platformHeapProbe()

    /// Bytes in use now. A probe that worked when chosen and fails later
    /// stops the run loudly rather than report a wrong figure.
    func bytesInUse() -> Int {
        guard let bytes = read() else { Verification.fail("the heap probe (\(method)) could not be read") }
        return bytes
    }

    /// Heap growth per observer across `register`, after a grace period so
    /// that retired slot arrays (and earlier scenarios' boxes) are freed.
    func bytesPerObserver(_ count: Int, _ register: () -> Void) -> Double {
        try? ObserverCore.reclaimNow()
        let before = bytesInUse()
        register()
        try? ObserverCore.reclaimNow()
        return Double(bytesInUse() - before) / Double(count)
    }
}

#if os(Linux)
    /// Linux: glibc's `mallinfo2()`, bytes in chunks in use plus mmapped
    /// chunks (`uordblks + hblkhd`, allocator overhead included). Swift's
    /// Glibc module does not import <malloc.h>, so `mallinfo2` is looked up
    /// with `dlsym` and called through its x86-64 SysV ABI: a function
    /// returning a struct in memory takes the result's address as a hidden
    /// first argument (and returns it), which is exactly the signature
    /// `(UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?`. Without it
    /// (another architecture, a C library without `mallinfo2`) the resident
    /// set size from /proc/self/statm stands in (page granularity, blind to
    /// freed holes: coarser); nil when neither can be read.
    private func platformHeapProbe() -> HeapProbe? {
        #if arch(x86_64)
            typealias MallInfo2 = @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?
            if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallinfo2") {
                let mallinfo2 = unsafeBitCast(symbol, to: MallInfo2.self)
                return HeapProbe(method: "mallinfo2 (uordblks + hblkhd)") {
                    // struct mallinfo2: ten size_t fields; uordblks is the 8th, hblkhd the 5th.
                    var fields = [Int](repeating: 0, count: 10)
                    fields.withUnsafeMutableBytes { _ = mallinfo2($0.baseAddress!) }
                    return fields[7] + fields[4]
                }
            }
        #endif
        let residentBytes: @Sendable () -> Int? = {
            guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
                let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
            else { return nil }
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
        guard residentBytes() != nil else { return nil }
        return HeapProbe(method: "resident set size (/proc/self/statm)", read: residentBytes)
    }
#elseif canImport(Darwin)
    /// Darwin: `malloc_zone_statistics` over every malloc zone (`size_in_use`,
    /// bytes in the blocks in use).
    private func platformHeapProbe() -> HeapProbe? {
        HeapProbe(method: "malloc_zone_statistics (size_in_use, all zones)") {
            var statistics = malloc_statistics_t()
            malloc_zone_statistics(nil, &statistics)
            return Int(statistics.size_in_use)
        }
    }
#endif
