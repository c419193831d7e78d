import Foundation
import XCTest

/// One test method of this test bundle run again in a new process: the
/// bundle's own executable started with the method as its only filter and
/// `OBSERVER_FRESH_PROCESS_TEST` naming it. That process has run no other
/// test, so no thread an earlier test started is alive in it and its heap is
/// small; a measurement of process-wide state (glibc's `mallinfo2()`) made
/// there sees only the method's own work.
///
/// The method asks ``isCurrent`` first: true in the new process, where it
/// measures and asserts; false in the suite's process, where it calls
/// ``run(timeout:)`` and asserts on the new process's exit status and output.
/// Linux only: on Linux the bundle is an executable (`/proc/self/exe`) that
/// takes `Module.Class/method` as a filter.
struct FreshTestProcess {
    /// How the new process ended, and everything it printed (standard
    /// output and standard error, interleaved).
    struct Outcome {
        /// Its exit status, or the signal that ended it.
        let status: Int32
        let endedBySignal: Bool
        let output: String

        var passed: Bool { status == 0 && !endedBySignal }

        /// "exit status 1", "signal 11".
        var ending: String { endedBySignal ? "signal \(status)" : "exit status \(status)" }
    }

    enum Failure: Error, CustomStringConvertible {
        case unsupported
        case timedOut(seconds: TimeInterval, output: String)

        var description: String {
            switch self {
            case .unsupported: "a test cannot start its own bundle again on this platform"
            case .timedOut(let seconds, let output):
                "the fresh process did not exit within \(seconds) s and was killed; its output:\n\(output)"
            }
        }
    }

    static let environmentVariable = "OBSERVER_FRESH_PROCESS_TEST"

    /// `Module.Class/method`, as XCTest on Linux takes a filter.
    let filter: String

    /// The test `method` (as `#function` spells it) of `testCase`.
    init(_ testCase: XCTestCase.Type, method: String = #function) {
        let name = method.hasSuffix("()") ? String(method.dropLast(2)) : method
        filter = "\(String(reflecting: testCase))/\(name)"
    }

    /// Whether this process is the fresh process started for this test.
    var isCurrent: Bool {
        ProcessInfo.processInfo.environment[Self.environmentVariable] == filter
    }

    /// Starts the bundle again running only this test, with this process's
    /// environment and `environment` over it, waits at most `timeout`
    /// seconds for it (then kills it and throws), and returns how it ended.
    func run(timeout: TimeInterval, environment extra: [String: String] = [:]) throws -> Outcome {
        #if os(Linux)
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            let outputURL = FileManager.default.temporaryDirectory
                .appendingPathComponent("observer-fresh-process-\(UUID().uuidString).log")
            guard FileManager.default.createFile(atPath: outputURL.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: outputURL.path])
            }
            defer { try? FileManager.default.removeItem(at: outputURL) }
            let output = try FileHandle(forWritingTo: outputURL)
            defer { try? output.close() }

            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = [filter]
            var environment = ProcessInfo.processInfo.environment
            environment.merge(extra) { _, new in new }
            environment[Self.environmentVariable] = filter
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            // A file, not a pipe: nothing has to drain it while the process runs.
            process.standardOutput = output
            process.standardError = output
            let exited = DispatchSemaphore(value: 0)
            process.terminationHandler = { _ in exited.signal() }
            try process.run()
            if exited.wait(timeout: .now() + timeout) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                _ = exited.wait(timeout: .now() + 10)
                throw Failure.timedOut(seconds: timeout, output: Self.text(of: outputURL))
            }
            return Outcome(
                status: process.terminationStatus, endedBySignal: process.terminationReason == .uncaughtSignal,
                output: Self.text(of: outputURL))
        #else
            throw Failure.unsupported
        #endif
    }

    private static func text(of url: URL) -> String {
        guard let data = try? Data(contentsOf: url) else { return "(the output could not be read)" }
        return String(decoding: data, as: UTF8.self)
    }
}
