import ObserverSwift

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Scenario {
    /// Two (and four) threads sending to the same N = 1 or N = 1k observers
    /// while another thread subscribes and cancels at a fixed rate
    /// (`churnChangesPerSecond` changes, a subscribe or a cancel each, paced
    /// by absolute deadlines so the rate does not depend on scheduling),
    /// against one sender alone with the same churn. Figures are wall time /
    /// all deliveries (aggregate), the wall time running from the first
    /// sender's first send to the last sender's last: creating, starting
    /// and joining the threads is not timed, and a run makes at least
    /// `minimumDeliveries` per sender, so that one descheduling during
    /// calibration cannot shrink a run to a few dozen cold sends. LOCKED is
    /// measured the same way beside it, and RAW with a list of its own per
    /// sender (nothing shared) gives the machine's own scaling of 2 and 4
    /// busy threads in the same run, twice: alone, and beside the same
    /// churn thread at the same rate (churning an `Event` no sender uses).
    /// The target compares with the first, the machine's gain with no
    /// third thread. The share of the second is printed beside it: when the
    /// machine has no core to spare for the churn thread (2 cores, 2
    /// senders) its wake-ups take time from the senders, RAW's as much as
    /// the subjects', and that share says how much of a miss is the
    /// machine's. The senders' CPU time per delivery, 2 senders against 1,
    /// is printed too: 1.00× when they contend on nothing, whatever else the
    /// machine runs.
    /// Target: what 2 senders gain over one (deliveries per second) is at
    /// least 0.95 of what the machine's RAW, a list per sender and no churn
    /// thread, gains with 2 threads; the 4 sender figures are reported
    /// beside it (a machine with more cores shows the curve there).
    static let concurrentSenders = Scenario(
        id: "two-senders-churn", title: "1, 2 and 4 senders + 1 churn thread", presentation: .bars,
        defaultSizes: [1, 1_000], quickSizes: [1, 1_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            context.step("N=\(size): 1, 2 and 4 senders + churn, ObserverSwift Event and LOCKED")
            let counters = PerThreadCounters()
            let subjects = [ChurnSubject.event(size, counters), ChurnSubject.locked(size, counters)]
            let raw = ChurnSubject.raw(size, counters)
            let rawPerSender = ChurnSubject.rawPerSender(size, counters, churns: false)
            let rawPerSenderChurned = ChurnSubject.rawPerSender(size, counters, churns: true)
            let runs: [(subject: ChurnSubject, senders: Int)] =
                [(raw, 1)] + senderCounts.map { (rawPerSender, $0) } + senderCounts.map { (rawPerSenderChurned, $0) }
                + subjects.flatMap { subject in senderCounts.map { (subject, $0) } }
            // Sends per thread so that each run takes about one repetition's time
            // (calibrating also warms every run up).
            let sends = runs.map { run in
                calibrateSends(
                    target: context.settings.repetitionNanoseconds, minimumSends: minimumDeliveries / size
                ) { sends in
                    measureSenders(run.subject, observers: size, senders: run.senders, sends: sends, counters: counters)
                        .elapsed
                }
            }
            var samples = Array(repeating: [Double](), count: runs.count)
            var churnPairs = 0
            var churnNanoseconds: UInt64 = 0
            var cpuSamples = Array(repeating: [Double](), count: runs.count)
            for _ in 0..<context.settings.repetitions {
                for index in runs.indices {
                    let run = runs[index]
                    let result = measureSenders(
                        run.subject, observers: size, senders: run.senders, sends: sends[index], counters: counters)
                    churnPairs += result.churnPairs
                    if run.subject.churns { churnNanoseconds &+= result.elapsed }
                    let deliveries = run.senders * sends[index] * size
                    samples[index].append(Double(result.elapsed) / Double(deliveries))
                    cpuSamples[index].append(Double(result.cpu) / Double(deliveries))
                }
            }
            for subject in subjects + [rawPerSender, rawPerSenderChurned] { subject.tearDown() }
            for (index, run) in runs.enumerated() {
                let name =
                    run.subject.name + ", \(run.senders) sender\(run.senders > 1 ? "s" : "")"
                    + (run.subject.churns ? "" : ", no churn")
                report.figures.append(
                    Figure(
                        scenario: context.scenario.id, size: size, implementation: name,
                        metric: "ns/delivery (aggregate)", summary: Summary(samples[index])))
            }
            report.setRatios(size: size, reference: "RAW, 1 sender, no churn")
            // CPU time per delivery of the senders: equal for 1 and 2 senders
            // when nothing is contended, whatever the machine's load.
            func cpuCost(_ name: String, _ senders: Int) -> Double {
                let index = runs.firstIndex { $0.subject.name == name && $0.senders == senders && $0.subject.churns }!
                return Summary(cpuSamples[index]).median
            }
            let cpuGrowth = cpuCost(Contender.eventClosureName, 2) / cpuCost(Contender.eventClosureName, 1)
            let lockedCPUGrowth = cpuCost("LOCKED", 2) / cpuCost("LOCKED", 1)
            // Deliveries per second of `senders` senders ÷ those of one.
            func scaling(_ name: String, _ senders: Int = 2, churns: Bool = true) -> Double {
                let tail = churns ? "" : ", no churn"
                let one = report.figure("\(name), 1 sender\(tail)", size: size)!.median
                let many = report.figure("\(name), \(senders) senders\(tail)", size: size)!.median
                return one / many
            }
            let eventScaling = scaling(Contender.eventClosureName)
            let lockedScaling = scaling("LOCKED")
            let machineScaling = scaling(rawPerSender.name, 2, churns: false)
            let churnedMachineScaling = scaling(rawPerSender.name, 2)
            let eventScaling4 = scaling(Contender.eventClosureName, 4)
            let machineScaling4 = scaling(rawPerSender.name, 4, churns: false)
            // Compared as printed: the two gains with two decimals each.
            let shareOfMachine =
                printedFixed(eventScaling, digits: 2) / printedFixed(machineScaling, digits: 2)
            let shareOfChurnedMachine =
                printedFixed(eventScaling, digits: 2) / printedFixed(churnedMachineScaling, digits: 2)
            // Aggregate deliveries per second, in millions.
            func throughput(_ name: String, _ senders: Int) -> Double {
                let suffix = senders == 1 ? "1 sender" : "\(senders) senders"
                return 1_000 / report.figure("\(name), \(suffix)", size: size)!.median
            }
            let changesPerSecond =
                churnNanoseconds == 0 ? 0 : Double(2 * churnPairs) / (Double(churnNanoseconds) / 1e9)
            report.verdicts.append(
                Verdict(
                    scenario: context.scenario.id,
                    target: "2 senders ÷ 1 ≥ 0.95 of the machine's RAW, a list per sender (N=\(sizeLabel(size)))",
                    measured:
                        "\(formatFixed(shareOfMachine, digits: 2)) of the machine's: Event \(formatFixed(eventScaling, digits: 2))×, "
                        + "machine \(formatFixed(machineScaling, digits: 2))×; beside the same churn thread the machine "
                        + "gains \(formatFixed(churnedMachineScaling, digits: 2))×, of which Event reaches "
                        + "\(formatFixed(shareOfChurnedMachine, digits: 2)); 4 senders: Event "
                        + "\(formatFixed(eventScaling4, digits: 2))×, machine \(formatFixed(machineScaling4, digits: 2))×; "
                        + "1 sender \(formatFigure(throughput(Contender.eventClosureName, 1))) M/s, "
                        + "2 senders \(formatFigure(throughput(Contender.eventClosureName, 2))) M/s "
                        + "(LOCKED \(formatFigure(lockedScaling))×); sender CPU ns/delivery "
                        + "2 vs 1 sender: \(formatFigure(cpuGrowth))× (LOCKED \(formatFigure(lockedCPUGrowth))×); "
                        + "churn \(formatFigure(changesPerSecond)) changes/s (\(churnPairs) pairs); "
                        + "load \(loadAverage())",
                    met: printedFixed(shareOfMachine, digits: 2) >= 0.95))
        }
        return report
    }
}

/// Sender counts measured beside one sender (the table's columns).
let senderCounts = [1, 2, 4]

/// Cache-line-separated counters: observers of sender t add to slot t, so no
/// two threads ever write the same line. Slots 0...3 are the senders' (at
/// most 4), 4...7 the churn thread's subscriptions'.
final class PerThreadCounters: @unchecked Sendable {
    // @unchecked: each slot is written by one thread at a time; read after joins.
    let pointer: UnsafeMutablePointer<Int>
    static let stride = 32  // 256 bytes apart

    init() {
        pointer = .allocate(capacity: 8 * PerThreadCounters.stride)
        pointer.initialize(repeating: 0, count: 8 * PerThreadCounters.stride)
    }

    deinit { pointer.deallocate() }

    /// The slot the observers of sender `thread` (0...3) add to.
    func stable(_ thread: Int) -> Int { pointer[thread * PerThreadCounters.stride] }
}

/// A thread-safe observer list under test: a send usable from several
/// threads at once and a churn step (subscribe one, cancel it).
struct ChurnSubject {
    let name: String
    let churns: Bool
    let send: (Int) -> Void
    let churnOnce: () -> Void
    var tearDown: () -> Void = {}

    /// Observers: `{ value in counters[value & 3] &+= value }`, so sender t
    /// (sending values with t in the two low bits) writes only its own slot.
    static func handler(_ counters: PerThreadCounters, base: Int) -> @Sendable (Int) -> Void {
        // Each sender writes only its own cache-line-separated slot.
        nonisolated(unsafe) let pointer = counters.pointer
        return { value in pointer[base + (value & 3) * PerThreadCounters.stride] &+= value }
    }

    static func event(_ size: Int, _ counters: PerThreadCounters) -> ChurnSubject {
        let event = Event<Int>()
        for _ in 0..<size { _ = event.subscribe(handler(counters, base: 0)) }
        let churnHandler = handler(counters, base: 4 * PerThreadCounters.stride)
        return ChurnSubject(
            name: Contender.eventClosureName, churns: true,
            send: { value in event.send(value) },
            churnOnce: { event.subscribe(churnHandler).cancel() },
            tearDown: { event.unsubscribeAll() })
    }

    static func locked(_ size: Int, _ counters: PerThreadCounters) -> ChurnSubject {
        let observers = LockedObservers()
        for _ in 0..<size { observers.subscribe(handler(counters, base: 0)) }
        let churnHandler = handler(counters, base: 4 * PerThreadCounters.stride)
        return ChurnSubject(
            name: "LOCKED", churns: true,
            send: { value in observers.send(value) },
            churnOnce: { observers.unsubscribe(observers.subscribe(churnHandler)) })
    }

    /// RAW with a list of its own per sender (sender t sends to list t),
    /// looping over the array's buffer and borrowing the list, so that no
    /// reference count is written: nothing is shared, and one, two and four
    /// of them measure how busy threads scale on the machine.
    ///
    /// With `churns`, a churn thread runs beside them as beside the
    /// subjects, subscribing and cancelling on an `Event` no sender uses:
    /// the machine's scaling with the same third thread taking its share
    /// of the cores.
    static func rawPerSender(_ size: Int, _ counters: PerThreadCounters, churns: Bool) -> ChurnSubject {
        let lists = (0..<4).map { _ in RawObservers((0..<size).map { _ in handler(counters, base: 0) }) }
        let borrowed = lists.map { Unmanaged.passUnretained($0) }
        let churned = Event<Int>()
        let churnHandler = handler(counters, base: 4 * PerThreadCounters.stride)
        return ChurnSubject(
            name: "RAW (buffer, a list per sender)", churns: churns,
            send: { value in borrowed[value & 3]._withUnsafeGuaranteedRef { $0.sendThroughBuffer(value) } },
            churnOnce: { churned.subscribe(churnHandler).cancel() },
            tearDown: { withExtendedLifetime((lists, churned)) {} })
    }

    /// RAW is not thread-safe: one sender, no churn; the reference.
    static func raw(_ size: Int, _ counters: PerThreadCounters) -> ChurnSubject {
        let observers = RawObservers((0..<size).map { _ in handler(counters, base: 0) })
        return ChurnSubject(
            name: "RAW", churns: false,
            send: { value in observers.send(value) },
            churnOnce: {})
    }
}

/// Runs `senders` (at most 4) threads each sending values 1...sends (tagged
/// with the thread in the two low bits) while, if the subject churns, another thread
/// subscribes and cancels at `churnChangesPerSecond`. Returns the wall time from the
/// first sender's first send to the last sender's last, the senders' CPU time, and
/// the churn pairs made; verifies every delivery.
func measureSenders(
    _ subject: ChurnSubject, observers: Int, senders: Int, sends: Int, counters: PerThreadCounters
) -> (elapsed: UInt64, cpu: UInt64, churnPairs: Int) {
    if senders > 4 { Verification.fail("\(subject.name): at most 4 senders (two tag bits), asked \(senders)") }
    let line = StartLine()
    let before = (0..<senders).map(counters.stable)
    var churnPairs = 0
    let churn =
        subject.churns
        ? BenchThread {
            line.arriveAndWait()
            // One pair (two changes) per period, at absolute deadlines; a
            // late thread skips the periods it missed instead of bursting.
            let period = UInt64(2_000_000_000 / churnChangesPerSecond)
            var deadline = monotonicNanoseconds() &+ period
            while !line.shouldStop {
                sleepUntil(deadline)
                if line.shouldStop { break }
                subject.churnOnce()
                churnPairs += 1
                let now = monotonicNanoseconds()
                deadline &+= period
                if deadline < now { deadline = now &+ period }
            }
        } : nil
    // Per sender, a line apart: CPU time, and the wall clock at its first
    // and after its last send.
    let times = UnsafeMutablePointer<UInt64>.allocate(capacity: senders * PerThreadCounters.stride)
    defer { times.deallocate() }
    let threads = (0..<senders).map { thread in
        BenchThread {
            line.arriveAndWait()
            let cpuStart = threadCPUNanoseconds()
            let start = monotonicNanoseconds()
            for index in stride(from: 1, through: sends, by: 1) {
                subject.send(index << 2 | thread)
            }
            let end = monotonicNanoseconds()
            let slot = times + thread * PerThreadCounters.stride
            slot[0] = threadCPUNanoseconds() &- cpuStart
            slot[1] = start
            slot[2] = end
        }
    }
    line.release(workers: senders + (churn == nil ? 0 : 1))
    for thread in threads { thread.join() }
    line.stop.store(true, ordering: .relaxed)
    // From the first sender's first send to the last sender's last: thread
    // creation, the start line and the joins are not timed.
    let slots = (0..<senders).map { times + $0 * PerThreadCounters.stride }
    let elapsed = slots.map { $0[2] }.max()! &- slots.map { $0[1] }.min()!
    churn?.join()
    for thread in 0..<senders {
        // Sender t sent 4i + t for i in 1...sends to every stable observer.
        let perObserver = expectedChecksum(sends: sends, deliveriesPerSend: 4) &+ thread &* sends
        Verification.expect(
            counters.stable(thread) &- before[thread], equals: perObserver &* observers,
            "\(subject.name): deliveries of sender \(thread) with \(senders) sender(s)")
    }
    let cpuTotal = slots.reduce(UInt64(0)) { $0 &+ $1[0] }
    return (elapsed, cpuTotal, churnPairs)
}

/// Deliveries a timed run makes at least (per sender): far more than a
/// thread's first sends, which run with cold caches.
let minimumDeliveries = 1 << 16

/// Observer changes (subscribes and cancels) per second by the churn thread.
let churnChangesPerSecond = 10_000

#if os(Linux)
    /// Sleeps until CLOCK_MONOTONIC reads `deadline` (ns): one absolute sleep.
    func sleepUntil(_ deadline: UInt64) {
        var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
    }
#elseif canImport(Darwin)
    /// Sleeps until CLOCK_MONOTONIC reads `deadline` (ns). Darwin has no
    /// `clock_nanosleep`: relative sleeps of what remains, until it is reached.
    func sleepUntil(_ deadline: UInt64) {
        while true {
            let now = monotonicNanoseconds()
            guard now < deadline else { return }
            let remaining = deadline - now
            var spec = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
            nanosleep(&spec, nil)
        }
    }
#endif

/// Sends per run so that one run takes about `target` ns (warms up too),
/// and at least `minimumSends`: a short run that a descheduling stretched
/// to `target / 4` would otherwise set the count from one preemption.
func calibrateSends(target: UInt64, minimumSends: Int = 16, _ run: (Int) -> UInt64) -> Int {
    var sends = 16
    while true {
        let elapsed = run(sends)
        if (elapsed >= target / 4 && sends >= minimumSends) || sends >= 1 << 40 {
            return max(1, Int(Double(target) / (Double(max(elapsed, 1)) / Double(sends))))
        }
        sends *= elapsed < target / 64 ? 8 : 2
    }
}

/// CPU time of the calling thread.
func threadCPUNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
}

/// The 1-minute load average, for the record.
func loadAverage() -> String {
    var loads = [Double](repeating: 0, count: 3)
    getloadavg(&loads, 3)
    return formatFixed(loads[0], digits: 2)
}
