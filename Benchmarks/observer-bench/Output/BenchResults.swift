import Foundation

/// Everything a run produced, with what is needed to judge it (machine, date,
/// settings) and its renderings: markdown table, JSON.
struct BenchResults: Codable {
    struct ScenarioResult: Codable {
        var id: String
        var title: String
        var plottedAsFanOut: Bool
        var figures: [Figure]
        var verdicts: [Verdict]
    }

    var date: String
    var machine: String
    var cores: Int
    var loadAverageAtStart: String
    var quick: Bool
    var repetitions: Int
    var repetitionMilliseconds: Double
    var scenarios: [ScenarioResult] = []
    var checksum: UInt64 = 0
    var verifiedRuns = 0
    var seconds = 0.0
    /// Replaces the method sentence of the markdown header when set.
    var method: String? = nil

    init(quick: Bool, settings: MeasurementSettings) {
        let formatter = ISO8601DateFormatter()
        date = formatter.string(from: Date())
        cores = ProcessInfo.processInfo.activeProcessorCount
        machine = BenchResults.cpuModel() + ", \(cores) cores"
        var loads = [Double](repeating: 0, count: 3)
        getloadavg(&loads, 3)
        loadAverageAtStart = loads.map { formatFixed($0, digits: 2) }.joined(separator: " ")
        self.quick = quick
        repetitions = settings.repetitions
        repetitionMilliseconds = Double(settings.repetitionNanoseconds) / 1e6
    }

    mutating func add(_ scenario: Scenario, _ report: ScenarioReport) {
        scenarios.append(
            ScenarioResult(
                id: scenario.id, title: scenario.title, plottedAsFanOut: scenario.presentation == .fanOut,
                figures: report.figures, verdicts: report.verdicts))
    }

    var verdicts: [Verdict] { scenarios.flatMap(\.verdicts) }

    private static func cpuModel() -> String {
        platformCPUModel() ?? "unknown CPU"
    }

    // MARK: Renderings

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(self), let text = String(data: data, encoding: .utf8) else {
            Verification.fail("cannot encode the results as JSON")
        }
        return text + "\n"
    }

    /// One table per scenario (rows: N; columns: implementations; cells:
    /// median [p10–p90] and the ratio to RAW), then the targets.
    func markdown() -> String {
        var lines: [String] = []
        lines.append("## observer-bench \(quick ? "(quick) " : "")— \(date)")
        lines.append("")
        lines.append(
            "Machine: \(machine); load average at start \(loadAverageAtStart). "
                + (method
                    ?? ("\(repetitions) repetitions of ~\(formatFigure(repetitionMilliseconds)) ms per figure after warm-up; "
                        + "median [p10–p90]; ×RAW = median / RAW median in the same run. Checksum \(checksum) "
                        + "(\(verifiedRuns) runs verified, \(formatFixed(seconds, digits: 0)) s)."))
        )
        for scenario in scenarios where !scenario.figures.isEmpty {
            let implementations = scenario.figures.map(\.implementation).uniqued()
            let sizes = scenario.figures.map(\.size).uniqued()
            let metric = scenario.figures[0].metric
            let hasTails = scenario.figures.contains { $0.p999 != nil }
            lines.append("")
            lines.append("### \(scenario.title) (\(scenario.id), \(metric))")
            lines.append("")
            if hasTails {
                lines.append("| N | implementation | p10 | p50 | p90 | p99 | p99.9 | p99.9 / p50 |")
                lines.append("|---|---|---|---|---|---|---|---|")
                for figure in scenario.figures {
                    let tail = (figure.p999 ?? .nan) / figure.median
                    lines.append(
                        "| \(sizeLabel(figure.size)) | \(figure.implementation) | \(formatFigure(figure.p10)) | "
                            + "\(formatFigure(figure.median)) | \(formatFigure(figure.p90)) | \(formatFigure(figure.p99 ?? .nan)) | "
                            + "\(formatFigure(figure.p999 ?? .nan)) | \(formatFigure(tail))× |")
                }
                continue
            }
            lines.append("| N | " + implementations.joined(separator: " | ") + " |")
            lines.append("|---|" + implementations.map { _ in "---:|" }.joined())
            for size in sizes {
                var row = "| \(sizeLabel(size)) |"
                for implementation in implementations {
                    guard
                        let figure = scenario.figures.first(where: {
                            $0.size == size && $0.implementation == implementation
                        })
                    else {
                        row += " – |"
                        continue
                    }
                    var cell = formatFigure(figure.median)
                    if figure.repetitions > 1 { cell += " [\(formatFigure(figure.p10))–\(formatFigure(figure.p90))]" }
                    if let ratio = figure.ratioToRaw, !figure.isRawReference { cell += " **\(formatFigure(ratio))×**" }
                    if figure.isRawReference { cell += " (ref)" }
                    row += " \(cell) |"
                }
                lines.append(row)
            }
        }
        if verdicts.isEmpty { return lines.joined(separator: "\n") + "\n" }
        lines.append("")
        lines.append("### Targets")
        lines.append("")
        lines.append("| scenario | target | measured | met |")
        lines.append("|---|---|---|---|")
        for verdict in verdicts {
            lines.append(
                "| \(verdict.scenario) | \(verdict.target) | \(verdict.measured) | \(verdict.met ? "met" : "**not met**") |"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension Array where Element: Hashable {
    /// The elements in first-seen order, without repeats.
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}

func writeFile(_ text: String, to path: String) {
    do {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
        Verification.fail("cannot write \(path): \(error)")
    }
}

#if os(Linux)
    /// The first "model name" of /proc/cpuinfo, or nil.
    private func platformCPUModel() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
#elseif canImport(Darwin)
    /// The `machdep.cpu.brand_string` sysctl, or nil.
    private func platformCPUModel() -> String? {
        var size = 0
        guard sysctlbyname("machdep.cpu.brand_string", nil, &size, nil, 0) == 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard sysctlbyname("machdep.cpu.brand_string", &bytes, &size, nil, 0) == 0 else { return nil }
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
#endif
