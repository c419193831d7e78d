import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// Connecting: unreachable servers, refused credentials, several URLs, options.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSConnectionFaultTests: XCTestCase {
    /// A loopback port with nothing listening.
    func closedPort() -> Int {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
        }
        close(listener)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    func testUnreachableServerFailsWithAClearErrorWithinTheConnectTimeout() throws {
        var options = NATSOptions(servers: ["nats://127.0.0.1:\(closedPort())"])
        options.connectTimeout = .milliseconds(500)
        let started = Date()
        XCTAssertThrowsError(try NATSBridge(options: options)) { error in
            let error = error as? NATSError
            XCTAssertEqual(error?.kind, .unreachable)
            XCTAssertTrue(error?.message.contains("127.0.0.1") ?? false, error?.message ?? "")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    func testServerThatNeverAnswersTimesOutInsteadOfHanging() throws {
        // Accepts TCP connections (the kernel's backlog) but never sends NATS' INFO.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                XCTAssertEqual(bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)), 0)
            }
        }
        XCTAssertEqual(listen(listener, 8), 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
        }
        var options = NATSOptions(servers: ["nats://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"])
        options.connectTimeout = .milliseconds(400)
        let started = Date()
        XCTAssertThrowsError(try NATSBridge(options: options)) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .unreachable, "\(error)")
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(elapsed, 0.3)
        XCTAssertLessThan(elapsed, 3)
    }

    func testSeveralURLsFailOverToTheOneThatAnswers() throws {
        var options = try NATSTestEnvironment.options()
        options.servers = ["nats://127.0.0.1:\(closedPort())", try NATSTestEnvironment.url()]
        options.name = "failover-test"
        options.latency = .immediate
        options.pendingLimits = .init(messages: 10, bytes: 1024)
        let log = StatusLog()
        let bridge = try NATSBridge(options: options, status: log.event)
        defer { bridge.close() }
        XCTAssertEqual(log.values.first, .connected(url: try NATSTestEnvironment.url()))
    }

    func testTokenServerRefusesWrongCredentialsAndDeliversNothing() throws {
        let server = try OwnedNATSServer(arguments: ["--auth", "right-token"], jetStream: false)
        defer { server.stop() }
        for credentials in [NATSOptions.Credentials.token("wrong-token"), .none] {
            var options = NATSOptions(servers: [server.url], credentials: credentials)
            options.connectTimeout = .seconds(2)
            let started = Date()
            XCTAssertThrowsError(try NATSBridge(options: options)) { error in
                let error = error as? NATSError
                XCTAssertEqual(error?.kind, .authorizationFailed, "\(String(describing: error))")
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        }
        // The right token connects, and only its imports receive.
        let good = try NATSBridge(options: NATSOptions(servers: [server.url], credentials: .token("right-token")))
        defer { good.close() }
        let event = Event<Int>()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let listener = try NATSBridge(options: NATSOptions(servers: [server.url], credentials: .token("right-token")))
        defer { listener.close() }
        try listener.import("secured", into: remote)
        try good.export(event, to: "secured")
        event.send(7)
        XCTAssertTrue(waitUntil { received.count == 1 })
    }

    func testUserPasswordServerRefusesAWrongPassword() throws {
        let server = try OwnedNATSServer(arguments: ["--user", "alice", "--pass", "right"], jetStream: false)
        defer { server.stop() }
        var options = NATSOptions(servers: [server.url], credentials: .userPassword(user: "alice", password: "wrong"))
        XCTAssertThrowsError(try NATSBridge(options: options)) {
            XCTAssertEqual(($0 as? NATSError)?.kind, .authorizationFailed, "\($0)")
        }
        options.credentials = .userPassword(user: "alice", password: "right")
        let bridge = try NATSBridge(options: options)
        bridge.close()
    }

    func testTLSSettingsAreAppliedAndBadFilesAreAClearError() throws {
        var options = try NATSTestEnvironment.options()
        options.tls = NATSOptions.TLS(trustedCertificatesFile: "/nonexistent/ca.pem")
        XCTAssertThrowsError(try NATSBridge(options: options)) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .invalidOption, "\(error)")
        }
        options.tls = NATSOptions.TLS(clientCertificateFile: "/nonexistent/cert.pem")
        XCTAssertThrowsError(try NATSBridge(options: options)) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .invalidOption, "\(error)")
        }
        // TLS required by the client against a plain server: refused at connect.
        options.tls = NATSOptions.TLS(skipsServerVerification: true)
        options.connectTimeout = .seconds(1)
        XCTAssertThrowsError(try NATSBridge(options: options))
    }

    /// `Tests/Fixtures/tls/<name>` (see its README).
    func tlsFixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/tls/\(name)").path
    }

    func testTLSFailuresHaveTheirOwnKindAndAMissingFileIsNamedWithItsReason() throws {
        var options = try NATSTestEnvironment.options()
        options.tls = NATSOptions.TLS(trustedCertificatesFile: "/nonexistent/ca.pem")
        XCTAssertThrowsError(try NATSBridge(options: options)) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .invalidOption, "\(error)")
            XCTAssertFalse("\(error)".contains("(null)"), "\(error)")
            XCTAssertTrue("\(error)".contains("/nonexistent/ca.pem: No such file or directory"), "\(error)")
        }

        let server = try OwnedNATSServer(
            arguments: ["--tls", "--tlscert", tlsFixture("server.pem"), "--tlskey", tlsFixture("server-key.pem")],
            jetStream: false)
        defer { server.stop() }
        var secure = NATSOptions(servers: [server.url])
        secure.connectTimeout = .seconds(2)
        secure.maxReconnectAttempts = 0
        // The authority that signed the server's certificate: connects, and carries events.
        secure.tls = NATSOptions.TLS(trustedCertificatesFile: tlsFixture("ca.pem"))
        let bridge = try NATSBridge(options: secure)
        let subject = NATSTestEnvironment.uniqueSubject()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        try bridge.import(subject, into: remote)
        let exporter = try NATSBridge(options: secure)
        let local = Event<Int>()
        try exporter.export(local, to: subject)
        local.send(1)
        XCTAssertTrue(waitUntil { received.values == [1] })
        exporter.close()
        bridge.close()

        // Another authority: the server's certificate is not trusted.
        secure.tls = NATSOptions.TLS(trustedCertificatesFile: tlsFixture("other-ca.pem"))
        XCTAssertThrowsError(try NATSBridge(options: secure)) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .tls, "\(error)")
        }
        // No TLS asked for, against a server that requires it.
        secure.tls = nil
        XCTAssertThrowsError(try NATSBridge(options: secure)) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .tls, "\(error)")
        }
        // TLS asked for, against a plain server.
        var plain = try NATSTestEnvironment.options()
        plain.tls = NATSOptions.TLS(trustedCertificatesFile: tlsFixture("ca.pem"))
        plain.maxReconnectAttempts = 0
        XCTAssertThrowsError(try NATSBridge(options: plain)) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .tls, "\(error)")
        }
    }

    func testEmptyServerListIsRejected() {
        XCTAssertThrowsError(try NATSBridge(options: NATSOptions(servers: []))) {
            XCTAssertEqual(($0 as? NATSError)?.kind, .invalidOption)
        }
    }
}
