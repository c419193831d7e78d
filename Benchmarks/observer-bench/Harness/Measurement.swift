/// How long and how often to measure.
struct MeasurementSettings {
    /// Timed repetitions per contender (at least 7).
    var repetitions: Int
    /// Wall time one repetition of one contender aims at.
    var repetitionNanoseconds: UInt64

    // Many short repetitions rather than a few long ones: on a shared
    // machine a preemption spoils a whole repetition, and the median of many
    // stays clean as long as fewer than half of them were hit.
    static let standard = MeasurementSettings(repetitions: 21, repetitionNanoseconds: 12_000_000)
    static let quick = MeasurementSettings(repetitions: 11, repetitionNanoseconds: 4_000_000)
}

/// One implementation measured in a comparison.
///
/// `send(k)` performs k sends with the values 1...k; every send reaches
/// `deliveriesPerSend` observers, each adding the value it got to a checksum
/// that `checksum()` reads. The harness checks after every run that the
/// checksum grew by exactly `deliveriesPerSend * (1 + ... + k)`.
struct Contender {
    let implementation: String
    let deliveriesPerSend: Int
    let send: (Int) -> Void
    let checksum: () -> Int
    /// Runs once after the measurement (unsubscribes, frees).
    var tearDown: () -> Void = {}
}

/// Times `send(k)` once and verifies its deliveries; returns nanoseconds.
private func timedRun(_ contender: Contender, sends: Int) -> UInt64 {
    let before = contender.checksum()
    let start = monotonicNanoseconds()
    contender.send(sends)
    let elapsed = monotonicNanoseconds() &- start
    let grown = contender.checksum() &- before
    Verification.expect(
        grown, equals: expectedChecksum(sends: sends, deliveriesPerSend: contender.deliveriesPerSend),
        "\(contender.implementation): checksum after \(sends) sends to \(contender.deliveriesPerSend) observers")
    return elapsed
}

/// Finds how many sends take about `target` nanoseconds (this also warms up).
private func calibrate(_ contender: Contender, target: UInt64) -> Int {
    var sends = 1
    while true {
        let elapsed = timedRun(contender, sends: sends)
        if elapsed >= target / 4 || sends >= 1 << 40 {
            let perSend = Double(max(elapsed, 1)) / Double(sends)
            return max(1, Int(Double(target) / perSend))
        }
        sends *= elapsed < target / 64 ? 8 : 2
    }
}

/// Measures several contenders in the same process, interleaved: each
/// repetition runs every contender once, in turn, so that noise from other
/// processes on a shared machine hits all of them alike and their ratios stay
/// meaningful. Each contender is calibrated (which warms it up), run once more
/// untimed, then timed `repetitions` times. Samples are ns per delivery (per
/// send when `deliveriesPerSend` is 0).
func measureInterleaved(_ contenders: [Contender], settings: MeasurementSettings) -> [Summary] {
    let sends = contenders.map { calibrate($0, target: settings.repetitionNanoseconds) }
    for (contender, count) in zip(contenders, sends) { _ = timedRun(contender, sends: count) }
    var samples = Array(repeating: [Double](), count: contenders.count)
    for _ in 0..<settings.repetitions {
        for index in contenders.indices {
            let elapsed = timedRun(contenders[index], sends: sends[index])
            let units = sends[index] * max(contenders[index].deliveriesPerSend, 1)
            samples[index].append(Double(elapsed) / Double(units))
        }
    }
    for contender in contenders { contender.tearDown() }
    return samples.map(Summary.init)
}
