import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// The server `make test` starts (see `.ci/with-nats-server`).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
enum NATSTestEnvironment {
    static let variable = "OBSERVER_NATS_URL"

    /// The URL of the test server; skips the test without one.
    static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty else {
            throw XCTSkip(
                "bridge tests need a nats-server: run `make test` (it starts one and sets \(variable)), "
                    + "or `\(variable)=nats://127.0.0.1:4222 swift test` against your own")
        }
        return url
    }

    static func options(_ configure: (inout NATSOptions) -> Void = { _ in }) throws -> NATSOptions {
        var options = NATSOptions(servers: [try url()])
        options.connectTimeout = .seconds(2)
        configure(&options)
        return options
    }

    /// A subject no other test uses.
    static func uniqueSubject(_ name: String = #function) -> String {
        let clean = name.filter { $0.isLetter || $0.isNumber }
        return "test.\(clean).\(UInt32.random(in: 0 ... .max))"
    }
}

/// The set-up most bridge tests share: two bridges to the test server, each its own connection
/// as two processes would have, `publisher` to export from and `subscriber` to import into (a
/// test may use both ways). Both are closed when the test ends, after its own `defer`s have
/// run: the subscriber first, then the publisher, then the server the test owns, if one is given.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension XCTestCase {
    /// - Parameters:
    ///   - server: a server the test owns (instead of a `defer { server.stop() }`), stopped once
    ///     both bridges are closed.
    ///   - publisherOptions, subscriberOptions: each bridge's options; nil, the test server's
    ///     (``NATSTestEnvironment/options(_:)``).
    ///   - publisherStatus, subscriberStatus: the event each bridge reports its statuses on.
    func makeBridgePair(
        stoppingAfterwards server: OwnedNATSServer? = nil,
        publisherOptions: NATSOptions? = nil, publisherStatus: Event<NATSStatus> = Event(),
        subscriberOptions: NATSOptions? = nil, subscriberStatus: Event<NATSStatus> = Event()
    ) throws -> (publisher: NATSBridge, subscriber: NATSBridge) {
        if let server {
            let held = LockedValue<OwnedNATSServer?>(server)
            addTeardownBlock { Self.takeValue(held)?.stop() }
        }
        let publisher = try NATSBridge(
            options: try publisherOptions ?? NATSTestEnvironment.options(), status: publisherStatus)
        let heldPublisher = LockedValue<NATSBridge?>(publisher)
        addTeardownBlock { Self.takeValue(heldPublisher)?.close() }
        let subscriber = try NATSBridge(
            options: try subscriberOptions ?? NATSTestEnvironment.options(), status: subscriberStatus)
        let heldSubscriber = LockedValue<NATSBridge?>(subscriber)
        addTeardownBlock { Self.takeValue(heldSubscriber)?.close() }
        return (publisher, subscriber)
    }

    /// Takes what `held` holds out of it. XCTest keeps a test's teardown blocks (and what they
    /// capture) until the process exits: a block that captured a bridge would keep it alive, and
    /// LeakSanitizer would report the weak-reference side table its exports and imports gave it.
    static func takeValue<Value>(_ held: LockedValue<Value?>) -> Value? {
        let value = held.value
        held.value = nil
        return value
    }
}

/// Polls `condition` every 5 ms until it holds or `timeout` passes; returns whether it held.
@discardableResult
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
func waitUntil(timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// A nats-server the test owns: loopback, started with a free port (kept across
/// restarts), killed in `stop()` and by `deinit`, bounded in time (``BoundedServerProcess``).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class OwnedNATSServer: @unchecked Sendable {
    // @unchecked: used by one thread at a time (the test thread, or the thread a restart
    // test hands it to while the test thread only waits).
    static let executable = ProcessInfo.processInfo.environment["NATS_SERVER"] ?? "/usr/sbin/nats-server"

    let directory: URL
    let extraArguments: [String]
    private(set) var port: Int = 0
    private var process: Process?

    init(arguments: [String] = [], jetStream: Bool = true) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw XCTSkip("\(Self.executable) is missing (make deps installs nats-server)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "observer-nats-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        extraArguments = arguments + (jetStream ? ["-js", "-sd", directory.appendingPathComponent("js").path] : [])
        try start(port: -1)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    var url: String { "nats://127.0.0.1:\(port)" }

    /// Starts the server; `-1` picks a free port, read back from the ports file.
    func start(port requested: Int) throws {
        let portsDirectory = directory.appendingPathComponent("ports-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: portsDirectory, withIntermediateDirectories: true)
        let process = BoundedServerProcess.make(
            Self.executable,
            ["-a", "127.0.0.1", "-p", String(requested), "--ports_file_dir", portsDirectory.path] + extraArguments)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        Self.keepRunLoopSideTableReachable()
        try process.run()
        self.process = process
        let found = waitUntil(timeout: 10) {
            guard let name = try? FileManager.default.contentsOfDirectory(atPath: portsDirectory.path).first,
                let text = readPortsFile(portsDirectory.appendingPathComponent(name).path),
                // `tls://` for a server started with `--tls`.
                let range = text.range(of: #"(nats|tls)://127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
                let port = Int(text[range].split(separator: ":").last ?? "")
            else { return false }
            self.port = port
            return true
        }
        guard found else {
            stop()
            throw NSError(domain: "OwnedNATSServer", code: 1, userInfo: [NSLocalizedDescriptionKey: "no port in 10 s"])
        }
    }

    /// `Process.run()` stores the current thread's `RunLoop` (alive until exit) in a weak
    /// property, which gives the run loop a weak-reference side table; once no `Process`
    /// is left, LeakSanitizer would report that side table. A weak reference in a global
    /// keeps it reachable (the approach of the main suite's `LeakSanitizerSupport`).
    /// Only the main thread's run loop lives until exit (another thread's goes with the
    /// thread, and its side table with the last `Process` that referenced it).
    private static func keepRunLoopSideTableReachable() {
        if Thread.isMainThread { runLoop = RunLoop.current }
    }

    // nonisolated(unsafe): written only from the main thread, never read.
    nonisolated(unsafe) private static weak var runLoop: RunLoop?

    /// Starts again on the same port and store (after `kill9()`).
    func restart() throws {
        try start(port: port)
    }

    /// Makes the server read its configuration file again (`nats-server --signal reload`, which
    /// sends it SIGHUP). A configuration that has no `jetstream` block makes nats-server 2.9 shut
    /// JetStream down: keep the block in a file the test reloads.
    func reload() {
        guard let process, process.isRunning else { return }
        let pid = process.processIdentifier
        // The server itself, not the `timeout` that bounds it (see `BoundedServerProcess`).
        let server = process.executableURL?.path == "/usr/bin/timeout" ? BoundedServerProcess.child(of: pid) : pid
        if let server { kill(server, SIGHUP) }
    }

    /// `kill -9`: no shutdown, no flush.
    func kill9() {
        guard let process, process.isRunning else { return }
        BoundedServerProcess.kill9(process)
        self.process = nil
    }

    func stop() {
        guard let process else { return }
        BoundedServerProcess.kill9(process)
        self.process = nil
    }
}

/// Collects a bridge's statuses.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class StatusLog: Sendable {
    let statuses: Received<NATSStatus>
    let event = Event<NATSStatus>()
    private let subscription: Subscription

    init() {
        let statuses = Received<NATSStatus>()
        self.statuses = statuses
        subscription = event.subscribe { status in statuses.append(status) }
    }

    var values: [NATSStatus] { statuses.values }

    func count(where predicate: (NATSStatus) -> Bool) -> Int { values.filter(predicate).count }
}

/// The text of the server's ports file, read with POSIX calls: the server may
/// be writing it while we poll, and Foundation's `String(contentsOf:)` was
/// seen (under LeakSanitizer) leaking its 4 KiB read buffer on that path.
/// Nil when the file cannot be opened or is not complete yet (the server
/// writes one JSON object: complete once it ends with `}`).
private func readPortsFile(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes = [UInt8](repeating: 0, count: 4096)
    let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    let text = String(decoding: bytes[0..<count], as: UTF8.self)
    return text.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("}") ? text : nil
}
