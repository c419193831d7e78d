/// One benchmark scenario: a name, its default sizes and a function that
/// measures it. Adding a scenario = writing one such value and listing it in
/// `ScenarioList.all`.
struct Scenario: Sendable {
    enum Presentation: Sendable {
        /// ns per delivery against N: drawn as lines on the log-log plot.
        case fanOut
        /// Anything else: drawn as bars.
        case bars
    }

    /// Identifier used on the command line and in the JSON (`closure-fan-out`).
    let id: String
    /// Human title for tables and the plot.
    let title: String
    let presentation: Presentation
    /// Sizes (N) measured by default and by `--quick`.
    let defaultSizes: [Int]
    let quickSizes: [Int]
    /// Part of `make bench`'s default set (false: only when named with --scenario).
    var inDefaultSet = true
    /// Measures the scenario at `context.sizes`.
    let run: @Sendable (ScenarioContext) -> ScenarioReport
}

/// What a scenario is asked to do.
struct ScenarioContext {
    let scenario: Scenario
    let sizes: [Int]
    let settings: MeasurementSettings
    let progress: Progress

    /// Notes progress of a step of this scenario on stderr.
    func step(_ text: String) {
        progress.step("\(scenario.id) \(text)")
    }

    /// Measures `contenders` interleaved (see `measureInterleaved`) and
    /// returns one figure each.
    func measure(size: Int, metric: String, _ contenders: [Contender]) -> [Figure] {
        step("N=\(size): \(contenders.map(\.implementation).joined(separator: ", "))")
        let summaries = measureInterleaved(contenders, settings: settings)
        return zip(contenders, summaries).map { contender, summary in
            Figure(
                scenario: scenario.id, size: size, implementation: contender.implementation,
                metric: metric, summary: summary)
        }
    }
}
