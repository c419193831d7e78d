#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Progress lines on stderr (stdout carries the results table).
final class Progress {
    private let start = monotonicNanoseconds()
    private let quiet: Bool

    init(quiet: Bool) {
        self.quiet = quiet
    }

    var elapsedSeconds: Double { Double(monotonicNanoseconds() - start) / 1e9 }

    func step(_ text: String) {
        guard !quiet else { return }
        writeStandardError("[\(formatFixed(elapsedSeconds, digits: 1)) s] \(text)\n")
    }
}

/// `value` with `digits` decimals (no Foundation formatting needed).
func formatFixed(_ value: Double, digits: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    var text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
    if digits > 0 {
        let fraction = Int(scaled - Double(whole) * scale)
        let fractionText = String(fraction)
        text += "." + String(repeating: "0", count: digits - fractionText.count) + fractionText
    }
    return text
}

/// `value` as ``formatFigure(_:)`` prints it: what a verdict compares with
/// its goal, so that a figure and its verdict never disagree.
func printedFigure(_ value: Double) -> Double {
    Double(formatFigure(value)) ?? value
}

/// `value` as ``formatFixed(_:digits:)`` prints it with `digits` decimals.
func printedFixed(_ value: Double, digits: Int) -> Double {
    Double(formatFixed(value, digits: digits)) ?? value
}

/// A figure with a sensible number of significant digits.
func formatFigure(_ value: Double) -> String {
    switch abs(value) {
    case ..<10: return formatFixed(value, digits: 2)
    case ..<100: return formatFixed(value, digits: 1)
    default: return formatFixed(value, digits: 0)
    }
}
