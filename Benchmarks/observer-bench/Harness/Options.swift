#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The command line.
struct Options {
    var quick = false
    var scenarioIDs: [String]? = nil
    var sizes: [Int]? = nil
    var repetitions: Int? = nil
    var jsonPath: String? = nil
    var svgPath: String? = nil
    var markdownPath: String? = nil
    var list = false
    var quiet = false
    var callgrind = false
    var callgrindChild: [String]? = nil
    var sends: Int? = nil

    static let usage = """
        usage: observer-bench [options]
          --quick                 small sizes, short repetitions: the whole run takes under 60 s
          --scenario ID[,ID...]   run only these scenarios (see --list); default: the default set
                                  (with --callgrind: only these implementations, e.g. event-weak,event-pair)
          --sizes N[,N...]        observer counts to use instead of each scenario's own
          --reps R                timed repetitions per figure (at least 7; default 21, quick 11)
          --json PATH             write every figure and verdict as JSON
          --svg PATH              write the plot (fan-out lines, bars for the rest)
          --markdown PATH         also write the results table to PATH
          --list                  list the scenarios and exit
          --quiet                 no progress lines on stderr
          --callgrind             instruction counts per delivery under valgrind (DocC article Performance)
          --sends S               sends per callgrind run (default 2000)
          --help                  this text
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ flag: String) -> String {
            guard let next = rest.popFirst() else { exitWithUsage("\(flag) needs a value") }
            return next
        }
        func integers(_ flag: String) -> [Int] {
            let parsed = value(flag).split(separator: ",").map { parseSize(String($0)) }
            guard !parsed.isEmpty, parsed.allSatisfy({ $0 != nil && $0! >= 0 }) else {
                exitWithUsage("\(flag) takes non-negative integers separated by commas (1k, 100k, 1M allowed)")
            }
            return parsed.map { $0! }
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": options.quick = true
            case "--scenario", "--scenarios":
                options.scenarioIDs = value(argument).split(separator: ",").map(String.init)
            case "--sizes": options.sizes = integers(argument)
            case "--reps":
                guard let reps = Int(value(argument)), reps >= 7 else { exitWithUsage("--reps needs a number ≥ 7") }
                options.repetitions = reps
            case "--json": options.jsonPath = value(argument)
            case "--svg": options.svgPath = value(argument)
            case "--markdown": options.markdownPath = value(argument)
            case "--list": options.list = true
            case "--quiet": options.quiet = true
            case "--callgrind": options.callgrind = true
            case "--sends":
                guard let sends = Int(value(argument)), sends > 0 else {
                    exitWithUsage("--sends needs a positive number")
                }
                options.sends = sends
            case "--callgrind-child":
                options.callgrindChild = [value(argument), value(argument), value(argument)]
            case "--help", "-h":
                print(usage)
                exit(0)
            default: exitWithUsage("unknown argument \(argument)")
            }
        }
        return options
    }
}

/// "100k" → 100000, "1M" → 1000000, "42" → 42.
func parseSize(_ text: String) -> Int? {
    if text.hasSuffix("k"), let base = Int(text.dropLast()) { return base * 1_000 }
    if text.hasSuffix("M"), let base = Int(text.dropLast()) { return base * 1_000_000 }
    return Int(text)
}

func exitWithUsage(_ message: String) -> Never {
    writeStandardError("observer-bench: \(message)\n\(Options.usage)\n")
    exit(64)
}
