import Foundation
import ObserverNATS
import ObserverSwift
import XCTest

/// TLS against a server with a real certificate chain, made with `openssl` when the test runs (so
/// that no private key is committed and "expired" is relative to the run): an expired server
/// certificate and one from an authority the client does not trust are refused with
/// `NATSError.Kind.tls`, while a current certificate from the same authority connects.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSTLSCertificateTests: XCTestCase {
    static let openssl = "/usr/bin/openssl"

    /// A directory with `ca.pem` (a new authority), and a server key with two certificates it
    /// signed for 127.0.0.1: `current.pem` (valid for a day) and `expired.pem` (its validity
    /// ended a day before it began, so it is expired when the test runs).
    func makeCertificates() throws -> URL {
        guard FileManager.default.isExecutableFile(atPath: Self.openssl) else {
            throw XCTSkip("\(Self.openssl) is missing: the TLS certificate tests make their certificates with it")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "observer-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n".write(
            to: directory.appendingPathComponent("ext.cnf"), atomically: true, encoding: .utf8)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try run(
            ["req", "-x509"] + key + [
                "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2", "-subj", "/CN=expiry CA",
            ], in: directory)
        try run(
            ["req"] + key + ["-keyout", "server-key.pem", "-out", "server.csr", "-subj", "/CN=localhost"], in: directory
        )
        for (name, days) in [("current.pem", "1"), ("expired.pem", "-1")] {
            try run(
                [
                    "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
                    "-out", name, "-days", days, "-extfile", "ext.cnf",
                ], in: directory)
        }
        return directory
    }

    func run(_ arguments: [String], in directory: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.openssl)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "openssl \(arguments.joined(separator: " "))")
    }

    func server(_ certificates: URL, certificate: String) throws -> OwnedNATSServer {
        try OwnedNATSServer(
            arguments: [
                "--tls", "--tlscert", certificates.appendingPathComponent(certificate).path, "--tlskey",
                certificates.appendingPathComponent("server-key.pem").path,
            ], jetStream: false)
    }

    func secureOptions(_ server: OwnedNATSServer, trusting file: String) -> NATSOptions {
        var options = NATSOptions(servers: [server.url])
        options.connectTimeout = .seconds(2)
        options.maxReconnectAttempts = 0
        options.tls = NATSOptions.TLS(trustedCertificatesFile: file)
        return options
    }

    func testAnExpiredServerCertificateIsRefusedWithTheTLSKind() throws {
        let certificates = try makeCertificates()
        defer { try? FileManager.default.removeItem(at: certificates) }
        let authority = certificates.appendingPathComponent("ca.pem").path

        let current = try server(certificates, certificate: "current.pem")
        defer { current.stop() }
        let bridge = try NATSBridge(options: secureOptions(current, trusting: authority))
        bridge.close()

        let expired = try server(certificates, certificate: "expired.pem")
        defer { expired.stop() }
        XCTAssertThrowsError(try NATSBridge(options: secureOptions(expired, trusting: authority))) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .tls, "\(error)")
            XCTAssertTrue(
                "\(error)".contains("expired") || ((error as? NATSError)?.detail ?? "").contains("expired"),
                "\(error) \(String(describing: (error as? NATSError)?.detail))")
        }
    }

    func testACertificateFromAnotherAuthorityIsRefusedWithTheTLSKind() throws {
        let certificates = try makeCertificates()
        defer { try? FileManager.default.removeItem(at: certificates) }
        let current = try server(certificates, certificate: "current.pem")
        defer { current.stop() }
        // The repository's fixture authority did not sign this server's certificate.
        let fixtureAuthority = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/tls/ca.pem").path
        XCTAssertThrowsError(try NATSBridge(options: secureOptions(current, trusting: fixtureAuthority))) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .tls, "\(error)")
        }
    }
}
