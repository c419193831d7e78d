/// One measured figure: a cost (lower is better) of one implementation in one
/// scenario at one size.
struct Figure: Codable {
    /// Scenario identifier (`closure-fan-out`, ...).
    var scenario: String
    /// The scenario's size parameter: observers registered (N).
    var size: Int
    /// Implementation measured (`ObserverSwift Event`, `RAW`, `LOCKED`, ...).
    var implementation: String
    /// Unit of median/p10/p90 (`ns/delivery`, `ns/send`, `ns/pair`, `bytes/observer`).
    var metric: String
    var median: Double
    var p10: Double
    var p90: Double
    /// Tail percentiles, for latency figures only.
    var p99: Double? = nil
    var p999: Double? = nil
    /// Repetitions (or samples, for latency figures) behind the statistics.
    var repetitions: Int
    /// median / the RAW median of the same scenario and size in this process.
    var ratioToRaw: Double? = nil
    /// True for the figure the scenario's ratios are taken against.
    var isRawReference: Bool = false

    init(
        scenario: String, size: Int, implementation: String, metric: String,
        summary: Summary, includeTails: Bool = false
    ) {
        self.scenario = scenario
        self.size = size
        self.implementation = implementation
        self.metric = metric
        median = summary.median
        p10 = summary.p10
        p90 = summary.p90
        if includeTails {
            p99 = summary.p99
            p999 = summary.p999
        }
        repetitions = summary.count
    }
}

/// A performance goal and whether this run met it. `met` compares the
/// figure as the verdict prints it (``printedFigure(_:)``,
/// ``printedFixed(_:digits:)``): a figure printed equal to its goal meets it.
struct Verdict: Codable {
    var scenario: String
    var target: String
    var measured: String
    var met: Bool
}

/// Everything one scenario produced.
struct ScenarioReport {
    var figures: [Figure] = []
    var verdicts: [Verdict] = []

    /// Sets `ratioToRaw` on every figure of `size` against `reference`'s median.
    mutating func setRatios(size: Int, reference: String) {
        guard let raw = figures.first(where: { $0.size == size && $0.implementation == reference }) else { return }
        for index in figures.indices where figures[index].size == size {
            figures[index].ratioToRaw = figures[index].median / raw.median
            if figures[index].implementation == reference { figures[index].isRawReference = true }
        }
    }

    func figure(_ implementation: String, size: Int) -> Figure? {
        figures.first { $0.implementation == implementation && $0.size == size }
    }
}

extension ScenarioReport {
    /// RAW is the faster of the two plain loops (`for in` and buffer) at `size`:
    /// ratios are taken against the honest floor.
    mutating func setRatiosToFastestRaw(size: Int) {
        let raws = figures.filter {
            $0.size == size && ($0.implementation == "RAW" || $0.implementation == "RAW (buffer)")
        }
        guard let fastest = raws.min(by: { $0.median < $1.median }) else { return }
        setRatios(size: size, reference: fastest.implementation)
    }

    /// "a: 1.23×, b: 4.56×" for verdict texts.
    static func list(_ items: [(String, Double)], unit: String = "×") -> String {
        items.map { "\($0.0): \(formatFigure($0.1))\(unit)" }.joined(separator: ", ")
    }
}

/// "1k", "100k", "1M" for sizes in tables.
func sizeLabel(_ size: Int) -> String {
    if size >= 1_000_000, size % 1_000_000 == 0 { return "\(size / 1_000_000)M" }
    if size >= 1_000, size % 1_000 == 0 { return "\(size / 1_000)k" }
    return "\(size)"
}
