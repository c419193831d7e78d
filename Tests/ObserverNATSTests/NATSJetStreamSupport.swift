import CNATS
import Foundation
import ObserverNATS
import ObserverSwift
import XCTest

/// JetStream API requests made with raw cnats, for what the bridge does not do itself
/// (deleting a stream or a consumer, a stream with message limits, asking for leaders).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class JetStreamAdmin: @unchecked Sendable {
    // @unchecked: `connection` is immutable and cnats' connection functions are thread-safe.
    let connection: OpaquePointer

    init(url: String) throws {
        var connection: OpaquePointer?
        let result = natsConnection_ConnectTo(&connection, url)
        guard result == NATS_OK, let connection else {
            throw NSError(
                domain: "JetStreamAdmin", code: Int(result.rawValue),
                userInfo: [NSLocalizedDescriptionKey: "connecting to \(url) failed"])
        }
        self.connection = connection
    }

    deinit {
        natsConnection_Destroy(connection)
    }

    /// Sends `body` to `$JS.API.<api>` and returns the decoded answer (nil when none came in 5 s).
    @discardableResult
    func request(_ api: String, _ body: [String: Any] = [:]) -> [String: Any]? {
        guard let data = try? JSONSerialization.data(withJSONObject: body) else { return nil }
        var reply: OpaquePointer?
        let result = data.withUnsafeBytes { bytes in
            natsConnection_Request(
                &reply, connection, "$JS.API.\(api)", bytes.baseAddress, Int32(bytes.count), 5000)
        }
        guard result == NATS_OK, let reply else { return nil }
        defer { natsMsg_Destroy(reply) }
        let answer = Data(bytes: natsMsg_GetData(reply), count: Int(natsMsg_GetDataLength(reply)))
        return try? JSONSerialization.jsonObject(with: answer) as? [String: Any]
    }

    /// The server name of the leader of `stream`, or of its consumer `durable`.
    func leader(stream: String, durable: String? = nil) -> String? {
        let answer = durable.map { request("CONSUMER.INFO.\(stream).\($0)") } ?? request("STREAM.INFO.\(stream)")
        return (answer?["cluster"] as? [String: Any])?["leader"] as? String
    }
}

/// Launches servers whose life is bounded: on Linux under `timeout -s KILL 600`, so that a
/// server outlives a test process that crashed (and never ran its `deinit`) by at most 10
/// minutes. `kill9` kills the server itself, by its pid (`timeout` then exits with it).
enum BoundedServerProcess {
    static let lifetimeSeconds = 600

    static func make(_ executable: String, _ arguments: [String]) -> Process {
        let process = Process()
        #if os(Linux)
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/timeout") {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
                process.arguments = ["-s", "KILL", String(lifetimeSeconds), executable] + arguments
                return process
            }
        #endif
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        return process
    }

    /// `kill -9` of the server `process` runs (its `timeout`'s child, or itself), then waits for `process`.
    static func kill9(_ process: Process) {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        if process.executableURL?.path == "/usr/bin/timeout" {
            if let child = child(of: pid) {
                kill(child, SIGKILL)
            } else {
                // Not forked yet: `timeout` passes SIGTERM on to its child when there is one.
                kill(pid, SIGTERM)
            }
        } else {
            kill(pid, SIGKILL)
        }
        process.waitUntilExit()
    }

    /// The first child of `pid` (Linux's `/proc/<pid>/task/<pid>/children`).
    static func child(of pid: pid_t) -> pid_t? {
        let path = "/proc/\(pid)/task/\(pid)/children"
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes[0..<count], as: UTF8.self)
        return text.split(separator: " ").first.flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }
}

/// Three nats-servers with JetStream clustered on loopback: free ports chosen up front
/// (kept across restarts), each with a private store directory under one temporary
/// directory, each stopped by its pid (`kill -9`) in `stop()` and by `deinit`, and each
/// bounded in time even if the test process dies (``BoundedServerProcess``).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class OwnedNATSCluster: @unchecked Sendable {
    // @unchecked: used by one thread at a time (the test thread, or a thread it hands a
    // kill or restart to while it only waits).
    let directory: URL
    let names = ["n1", "n2", "n3"]
    let clientPorts: [Int]
    let routePorts: [Int]
    private var processes: [Process?]

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: OwnedNATSServer.executable) else {
            throw XCTSkip("\(OwnedNATSServer.executable) is missing (make deps installs nats-server)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "observer-nats-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ports = try freePorts(6)
        clientPorts = Array(ports[0..<3])
        routePorts = Array(ports[3..<6])
        processes = [nil, nil, nil]
        for index in 0..<3 {
            let routes = (0..<3).filter { $0 != index }.map { "nats-route://127.0.0.1:\(routePorts[$0])" }
            let store = directory.appendingPathComponent(names[index]).path
            let configuration = """
                server_name: \(names[index])
                listen: 127.0.0.1:\(clientPorts[index])
                jetstream { store_dir: "\(store)" }
                cluster {
                  name: observer
                  listen: 127.0.0.1:\(routePorts[index])
                  routes: [\(routes.map { "\"\($0)\"" }.joined(separator: ", "))]
                }
                """
            try configuration.write(
                to: directory.appendingPathComponent("\(names[index]).conf"), atomically: true, encoding: .utf8)
        }
        for index in 0..<3 { try start(index) }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    var urls: [String] { clientPorts.map { "nats://127.0.0.1:\($0)" } }

    func index(of name: String) -> Int? { names.firstIndex(of: name) }

    /// Starts node `index` (again) with its configuration and store.
    func start(_ index: Int) throws {
        let process = BoundedServerProcess.make(
            OwnedNATSServer.executable, ["-c", directory.appendingPathComponent("\(names[index]).conf").path])
        let log = directory.appendingPathComponent("\(names[index]).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        try handle.close()
        processes[index] = process
    }

    /// `kill -9` of node `index`: no shutdown, no flush.
    func kill9(_ index: Int) {
        guard let process = processes[index] else { return }
        BoundedServerProcess.kill9(process)
        processes[index] = nil
    }

    func stop() {
        for index in processes.indices { kill9(index) }
    }

    /// Waits until the cluster's JetStream answers API requests (its meta leader is elected).
    func waitUntilReady(timeout: TimeInterval = 30) throws -> JetStreamAdmin {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let admin = try? JetStreamAdmin(url: urls[0]),
                let info = admin.request("INFO"), info["error"] == nil
            {
                return admin
            }
            usleep(200_000)
        }
        throw NSError(
            domain: "OwnedNATSCluster", code: 1, userInfo: [NSLocalizedDescriptionKey: "no JetStream in \(timeout) s"])
    }
}

/// `count` TCP ports free on loopback now (bound, read back and closed together).
private func freePorts(_ count: Int) throws -> [Int] {
    var descriptors: [Int32] = []
    defer { descriptors.forEach { close($0) } }
    var ports: [Int] = []
    for _ in 0..<count {
        #if os(Linux)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw NSError(domain: "freePorts", code: Int(errno)) }
        descriptors.append(descriptor)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw NSError(domain: "freePorts", code: Int(errno)) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        ports.append(Int(UInt16(bigEndian: address.sin_port)))
    }
    return ports
}

/// What observers received, judged against 1...expected.
struct DeliveryAccount: CustomStringConvertible {
    let delivered: Int
    let lost: Int
    let duplicated: Int
    let outOfOrder: Int

    init(_ values: [Int], expected: Int) {
        delivered = values.count
        let distinct = Set(values)
        lost = (1...expected).filter { !distinct.contains($0) }.count
        duplicated = values.count - distinct.count
        var highest = 0
        var late = 0
        for value in values {
            if value < highest { late += 1 }
            highest = max(highest, value)
        }
        outOfOrder = late
    }

    var description: String {
        "delivered \(delivered), lost \(lost), duplicated \(duplicated), out of order \(outOfOrder)"
    }
}

/// The events of the statuses of `log` that are `.unconfirmed`, summed.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
func unconfirmedCount(_ log: StatusLog) -> Int {
    log.values.reduce(0) { total, status in
        if case .unconfirmed(_, let count, _) = status { total + count } else { total }
    }
}

/// The events of the statuses of `log` that are `.refused`, summed.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
func refusedCount(_ log: StatusLog) -> Int {
    log.values.reduce(0) { total, status in
        if case .refused(_, let count, _) = status { total + count } else { total }
    }
}
