#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Proof that the callbacks really ran: every measured run checks its
/// delivery count (through a checksum of the values delivered) against the
/// expected one and stops the process loudly on any difference; all
/// checksums are folded into one figure printed at the end, so the optimizer
/// cannot drop the work.
enum Verification {
    nonisolated(unsafe) private static var foldedChecksum: UInt64 = 0
    nonisolated(unsafe) private static var checks = 0

    /// The checksum of every verified run so far.
    static var checksum: UInt64 { foldedChecksum }
    /// How many runs were verified.
    static var checkCount: Int { checks }

    /// Fails the process when `observed != expected`.
    static func expect(_ observed: Int, equals expected: Int, _ what: @autoclosure () -> String) {
        checks += 1
        foldedChecksum = (foldedChecksum &* 1_099_511_628_211) ^ UInt64(bitPattern: Int64(observed))
        if observed != expected {
            fail("\(what()): observed \(observed), expected \(expected)")
        }
    }

    static func fail(_ message: String) -> Never {
        let text = "observer-bench: VERIFICATION FAILED: \(message)\n"
        writeStandardError(text)
        exit(2)
    }
}

/// The checksum a run of `sends` sends with values 1...sends adds when each
/// send reaches `deliveriesPerSend` observers: deliveriesPerSend * sum(1...sends).
func expectedChecksum(sends: Int, deliveriesPerSend: Int) -> Int {
    let sum = sends % 2 == 0 ? (sends / 2) &* (sends &+ 1) : sends &* ((sends &+ 1) / 2)
    return sum &* deliveriesPerSend
}

/// What a closure observer writes to: one field of a class instance, so the
/// write is a real store the optimizer cannot remove.
// @unchecked (both classes): a scenario delivers to one Sink or Target from
// one thread at a time; concurrent scenarios use `PerThreadCounters`.
final class Sink: @unchecked Sendable {
    var total = 0
}

/// A weakly held observer target; also the CAST baseline's protocol observer.
final class Target: IntObserving, @unchecked Sendable {
    var total = 0

    func observe(_ value: Int) {
        total &+= value
    }
}

/// The protocol a protocol-typed observer list delivers to (CAST baseline).
protocol IntObserving: AnyObject {
    func observe(_ value: Int)
}
