import Foundation

/// Instruction counts per delivery under `valgrind --tool=callgrind`: a figure
/// that does not move with the machine's load.
///
/// Swift cannot use callgrind's client requests (they are C macros), so the
/// harness measures differences instead: for each implementation and N it
/// runs itself twice under callgrind as a child (`--callgrind-child IMPL N
/// SENDS`) that builds the observers, sends once to warm up, then sends SENDS
/// more times (first run) or not at all (second run). Everything but those
/// sends is identical in both runs (deterministic hashing is switched on), so
/// (Ir(first) − Ir(second)) / (SENDS × N) is the instructions per delivery,
/// send overhead included (per send for N = 0).
///
/// Valgrind 3.19 (Debian 12) cannot read the DWARF 5 debug information the
/// Swift toolchain writes ("unhandled dwarf2 abbrev form"), so the children
/// run a copy of this executable stripped with `objcopy --strip-debug`
/// (symbols kept; only totals are read).
enum Callgrind {
    /// Implementations the child can build, with the contender factory.
    static let implementations: [(id: String, make: @Sendable (Int) -> Contender)] = [
        ("raw", { .raw(count: $0, sink: Sink()) }),
        ("raw-buffer", { .rawBuffer(count: $0, sink: Sink()) }),
        ("raw-borrowed", { .rawBorrowed(count: $0, sink: Sink()) }),
        ("locked", { .locked(count: $0, sink: Sink()) }),
        ("event", { .eventClosures(count: $0, sink: Sink()) }),
        ("weak", { .weak(targets: (0..<$0).map { _ in Target() }) }),
        ("cast", { .cast(targets: (0..<$0).map { _ in Target() }) }),
        ("event-weak", { .eventTargets((0..<$0).map { _ in Target() }) }),
        ("protocol", { .protocolObservers((0..<$0).map { _ in Target() }) }),
        // N is the key count here; a "send" goes to one key with one observer.
        ("keyed", { .keyedEvent(keys: $0, sink: Sink()) }),
        // The same with one weak-target subscription per key.
        ("keyed-weak", { .keyedTargets(keys: $0, sink: Sink()) }),
        // A "send" here is one `value = x` set of an ObservableValue.
        ("value", { .valueObservers(count: $0, sink: Sink()) }),
        // A "send" here is one read of `value` (N, the observers, does not change a read).
        ("value-read", { .valueReads(observers: $0, sink: Sink()) }),
        // Sends in bursts of 64 through send(contentsOf:).
        ("event-batch", { .eventBatches(count: $0, burst: 64, sink: Sink()) }),
        // A "send" here is one subscribe + cancel pair with N registered.
        ("event-pair", { .eventPairs(registered: $0, sink: Sink()) }),
        // The same with a KeyedEvent: N keys registered, the pair on a key of its own.
        ("keyed-pair", { .keyedPairs(registered: $0, sink: Sink()) }),
        // addObserver + removeObserver pairs with N registered (protocol-typed).
        ("registry-pair", { .registryPairs(registered: (0..<$0).map { _ in Target() }) }),
        ("registry-send-pair", { .registryPairs(registered: (0..<$0).map { _ in Target() }, sendingBetween: true) }),
        ("flowduino-pair", { .flowduinoPairs(registered: (0..<$0).map { _ in Target() }) }),
    ]

    /// The child: build, warm up with one send, send `sends` times, verify.
    static func runChild(_ arguments: [String]) {
        guard let make = implementations.first(where: { $0.id == arguments[0] })?.make,
            let size = parseSize(arguments[1]), let sends = Int(arguments[2])
        else {
            exitWithUsage(
                "--callgrind-child IMPL N SENDS; IMPL one of \(implementations.map(\.id).joined(separator: ", "))")
        }
        let contender = make(size)
        let start = contender.checksum()
        contender.send(1)
        contender.send(sends)
        Verification.expect(
            contender.checksum() &- start,
            equals: expectedChecksum(sends: 1, deliveriesPerSend: contender.deliveriesPerSend)
                &+ expectedChecksum(sends: sends, deliveriesPerSend: contender.deliveriesPerSend),
            "callgrind child \(arguments.joined(separator: " "))")
        contender.tearDown()
    }

    /// The parent: runs every implementation at every size twice under
    /// callgrind and prints (and optionally writes) the table.
    static func run(_ options: Options) {
        let sizes = options.sizes ?? [0, 1, 100, 10_000]
        // --scenario names callgrind implementations here (raw, event-weak, event-pair, ...).
        if let ids = options.scenarioIDs,
            let unknown = ids.first(where: { id in !implementations.contains { $0.id == id } })
        {
            exitWithUsage(
                "unknown callgrind implementation \(unknown); known: \(implementations.map(\.id).joined(separator: ", "))"
            )
        }
        let selected = implementations.filter { options.scenarioIDs?.contains($0.id) ?? true }
        let progress = Progress(quiet: options.quiet)
        let executable = strippedCopy()
        defer { try? FileManager.default.removeItem(atPath: executable) }
        var report = ScenarioReport()
        for size in sizes {
            for implementation in selected {
                if size == 0, implementation.id != "raw", implementation.id != "event", implementation.id != "locked" {
                    continue
                }
                let isPair = implementation.id.hasSuffix("-pair")
                let isPerSend =
                    isPair || implementation.id.hasPrefix("keyed") || implementation.id == "value-read"
                let sends = options.sends ?? (isPerSend ? 20_000 : max(10, 200_000 / max(size, 1)))
                progress.step("callgrind \(implementation.id) N=\(size): \(sends) sends, then 0")
                let full = instructions(executable, implementation.id, size, sends)
                let baseline = instructions(executable, implementation.id, size, 0)
                let perDelivery = Double(full - baseline) / Double(sends * (isPerSend ? 1 : max(size, 1)))
                let pairLabel = implementation.id == "event-pair" ? " subscribe+cancel pair" : " add+remove pair"
                let name =
                    implementation.make(0).implementation
                    + (isPair
                        ? pairLabel
                        : implementation.id.hasPrefix("keyed")
                            ? " (per send, N keys)" : implementation.id == "value-read" ? " (per read)" : "")
                report.figures.append(
                    Figure(
                        scenario: "callgrind", size: size, implementation: name,
                        metric: "instructions/delivery", summary: Summary([perDelivery])))
            }
            report.setRatios(size: size, reference: "RAW")
            for index in report.figures.indices
            where report.figures[index].implementation.hasSuffix("pair")
                || report.figures[index].implementation.hasSuffix("keys)")
                || report.figures[index].implementation.hasSuffix("read)")
            {
                report.figures[index].ratioToRaw = nil  // per pair or per keyed send, not per delivery
            }
        }
        var results = BenchResults(
            quick: false, settings: MeasurementSettings(repetitions: 1, repetitionNanoseconds: 0))
        let scenario = Scenario(
            id: "callgrind", title: "instructions per delivery (callgrind Ir, difference of two runs)",
            presentation: .bars, defaultSizes: sizes, quickSizes: sizes
        ) { _ in ScenarioReport() }
        results.add(scenario, report)
        results.seconds = progress.elapsedSeconds
        results.method =
            "Instructions (callgrind Ir) per delivery: (Ir of a run with S sends − Ir of the same run "
            + "with 0 sends) / (S × N), per send for N = 0; ×RAW against the plain `for in` loop. "
            + "\(formatFixed(results.seconds, digits: 0)) s."
        let markdown = results.markdown()
        print(markdown)
        if let path = options.markdownPath { writeFile(markdown, to: path) }
        if let path = options.jsonPath { writeFile(results.json(), to: path) }
    }

    /// Total instructions (Ir) of one child run under callgrind.
    private static func instructions(_ executable: String, _ implementation: String, _ size: Int, _ sends: Int) -> Int {
        let outFile = NSTemporaryDirectory() + "observer-bench-callgrind-\(getpid()).out"
        defer { try? FileManager.default.removeItem(atPath: outFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "valgrind", "--tool=callgrind", "--callgrind-out-file=\(outFile)", "--quiet",
            executable, "--callgrind-child", implementation, "\(size)", "\(sends)",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_DETERMINISTIC_HASHING"] = "1"
        process.environment = environment
        do {
            try process.run()
        } catch {
            Verification.fail("cannot run valgrind (is it installed?): \(error)")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            Verification.fail(
                "valgrind run of \(implementation) N=\(size) sends=\(sends) exited with \(process.terminationStatus)")
        }
        guard let text = try? String(contentsOfFile: outFile, encoding: .utf8) else {
            Verification.fail("callgrind wrote no \(outFile)")
        }
        for line in text.split(separator: "\n").reversed() where line.hasPrefix("summary:") || line.hasPrefix("totals:")
        {
            if let value = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) { return value }
        }
        Verification.fail("no totals in \(outFile)")
    }

    /// This executable without debug information, in a temporary file.
    private static func strippedCopy() -> String {
        let source = currentExecutablePath()
        let copy = NSTemporaryDirectory() + "observer-bench-stripped-\(getpid())"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["objcopy", "--strip-debug", source, copy]
        do {
            try process.run()
        } catch {
            Verification.fail("cannot run objcopy (binutils): \(error)")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { Verification.fail("objcopy --strip-debug \(source) failed") }
        return copy
    }
}

#if os(Linux)
    /// This process's executable file: where /proc/self/exe points.
    private func currentExecutablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
#elseif canImport(Darwin)
    /// This process's executable file, as dyld loaded it.
    private func currentExecutablePath() -> String {
        Bundle.main.executablePath ?? CommandLine.arguments[0]
    }
#endif
