#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// observer-bench: every scenario against its baselines in one process; see
// `--help`, Harness/ for the method and Scenarios/ for what is measured.

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))

if let child = options.callgrindChild {
    Callgrind.runChild(child)
    exit(0)
}

if options.list {
    for scenario in ScenarioList.all {
        let sizes = scenario.defaultSizes.map(sizeLabel).joined(separator: ",")
        print(
            "\(scenario.id)\t\(scenario.title)\tN=\(sizes)\(scenario.inDefaultSet ? "" : "\t(not in the default set)")")
    }
    exit(0)
}

if options.callgrind {
    Callgrind.run(options)
    exit(0)
}

var scenarios: [Scenario] = []
if let ids = options.scenarioIDs {
    for id in ids {
        guard let scenario = ScenarioList.named(id) else {
            exitWithUsage("unknown scenario \(id); known: \(ScenarioList.all.map(\.id).joined(separator: ", "))")
        }
        scenarios.append(scenario)
    }
} else {
    scenarios = ScenarioList.all.filter(\.inDefaultSet)
}

var settings = options.quick ? MeasurementSettings.quick : MeasurementSettings.standard
if let repetitions = options.repetitions { settings.repetitions = repetitions }
let progress = Progress(quiet: options.quiet)
var results = BenchResults(quick: options.quick, settings: settings)

for scenario in scenarios {
    let sizes = options.sizes ?? (options.quick ? scenario.quickSizes : scenario.defaultSizes)
    let context = ScenarioContext(scenario: scenario, sizes: sizes, settings: settings, progress: progress)
    let report = scenario.run(context)
    results.add(scenario, report)
}
results.checksum = Verification.checksum
results.verifiedRuns = Verification.checkCount
results.seconds = progress.elapsedSeconds
progress.step("done: \(results.verifiedRuns) runs verified")

let markdown = results.markdown()
print(markdown)
if let path = options.markdownPath { writeFile(markdown, to: path) }
if let path = options.jsonPath { writeFile(results.json(), to: path) }
if let path = options.svgPath { writeFile(SVGPlot(results: results).render(), to: path) }
