import Foundation
import ObserverSwift
import ObserverTestSupport
import XCTest

@testable import ObserverNATS

/// What the server refuses reaches the export or import it belongs to, counted exactly:
/// at-least-once events to a subject the stream stopped storing, and permission denials
/// (a user that may publish and subscribe `perm.ok.>` only), at most once and at least once.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSRefusalTests: XCTestCase {
    func testAtLeastOnceEventsToASubjectTheStreamStoppedStoringAreRefusedWithTheirExactCount() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let admin = try JetStreamAdmin(url: server.url)
        let log = StatusLog()
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        let bridge = try NATSBridge(options: options, status: log.event)
        defer { bridge.close() }
        let stream = NATSStream(name: "NARROWED", subjects: ["narrowed.>"])
        let local = Event<Int>()
        let export = try bridge.export(local, to: "narrowed.values", delivery: .atLeastOnce(stream: stream))
        for value in 1...10 { local.send(value) }
        XCTAssertEqual(bridge.flush(timeout: .seconds(10)), 0)
        // The stream no longer covers the export's subject.
        var config = try XCTUnwrap(admin.request("STREAM.INFO.NARROWED")?["config"] as? [String: Any])
        config["subjects"] = ["narrowed.other"]
        let updated = admin.request("STREAM.UPDATE.NARROWED", config)
        XCTAssertNil(updated?["error"], "\(updated ?? [:])")
        for value in 11...30 { local.send(value) }
        XCTAssertTrue(waitUntil(timeout: 30) { bridge.pendingPublishes == 0 }, "given up, not republished forever")
        XCTAssertEqual(refusedCount(log), 20)
        XCTAssertEqual(export.refusedPublishes, 20)
        XCTAssertEqual(export.unconfirmedPublishes, 0)
        XCTAssertEqual(export.failedPublishes, 20)
        let reasons = log.values.compactMap { status -> String? in
            if case .refused("narrowed.values", _, let reason) = status { reason } else { nil }
        }
        XCTAssertFalse(reasons.isEmpty)
        XCTAssertTrue(
            reasons.allSatisfy { $0 == "stream NARROWED no longer stores narrowed.values" }, "\(reasons)")
        XCTAssertEqual(bridge.close(), 0, "nothing left to give up")
    }

    /// A server whose user `limited` may publish and subscribe `perm.ok.>` (and what
    /// JetStream needs), and whose user `admin` may do everything.
    func makePermissionServer() throws -> OwnedNATSServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "observer-nats-perm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = """
            authorization {
              users = [
                {user: admin, password: adminpass}
                {user: limited, password: limitedpass, permissions: {
                  publish: ["perm.ok.>", "$JS.API.>", "$JS.ACK.>", "_INBOX.>"]
                  subscribe: ["perm.ok.>", "_INBOX.>", "_observer.>"]
                }}
              ]
            }
            """
        let file = directory.appendingPathComponent("server.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        return try OwnedNATSServer(arguments: ["-c", file.path])
    }

    func limitedOptions(_ server: OwnedNATSServer) -> NATSOptions {
        var options = NATSOptions(servers: [server.url])
        options.credentials = .userPassword(user: "limited", password: "limitedpass")
        options.reconnectWait = .milliseconds(50)
        return options
    }

    func testAtMostOncePublishesToADeniedSubjectAreCountedAndReportedWithTheirSubject() throws {
        let server = try makePermissionServer()
        defer { server.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(options: limitedOptions(server), status: log.event)
        defer { bridge.close() }
        let allowed = Event<Int>()
        let denied = Event<Int>()
        let alsoDenied = Event<Int>()
        let allowedExport = try bridge.export(allowed, to: "perm.ok.values")
        let deniedExport = try bridge.export(denied, to: "perm.no.values")
        let alsoDeniedExport = try bridge.export(alsoDenied, to: "perm.never.values")
        for value in 1...5 {
            denied.send(value)
            allowed.send(value)
            alsoDenied.send(value)
            alsoDenied.send(value)
        }
        bridge.flush(timeout: .seconds(5))
        XCTAssertTrue(
            waitUntil(timeout: 10) { deniedExport.failedPublishes + alsoDeniedExport.failedPublishes == 15 },
            "\(deniedExport.failedPublishes) + \(alsoDeniedExport.failedPublishes)")
        XCTAssertEqual(deniedExport.failedPublishes, 5, "each denial charged to the export of its subject")
        XCTAssertEqual(alsoDeniedExport.failedPublishes, 10)
        XCTAssertEqual(allowedExport.failedPublishes, 0)
        let failures = log.values.compactMap { status -> String? in
            if case .publishFailed("perm.no.values", let error) = status { error } else { nil }
        }
        XCTAssertEqual(failures.count, 5, "\(log.values)")
        XCTAssertTrue(failures.allSatisfy { $0.contains("Permissions Violation") }, "\(failures)")
        XCTAssertFalse(
            log.values.contains { if case .error = $0 { true } else { false } },
            "a denial that names no subject: \(log.values)")
    }

    func testAnImportOfASubjectTheUserMayNotSubscribeToFailsAtOnce() throws {
        let server = try makePermissionServer()
        defer { server.stop() }
        var options = limitedOptions(server)
        options.echo = true
        let bridge = try NATSBridge(options: options)
        defer { bridge.close() }
        XCTAssertThrowsError(try bridge.import("perm.no.>", into: Event<Int>())) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .authorizationFailed, "\(error)")
            XCTAssertTrue("\(error)".contains("perm.no.>"), "\(error)")
        }
        // The connection and the other imports are unaffected.
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try bridge.import("perm.ok.values", into: remote)
        let local = Event<Int>()
        try bridge.export(local, to: "perm.ok.values")
        for value in 1...5 { local.send(value) }
        XCTAssertTrue(waitUntil { received.count == 5 })
        XCTAssertEqual(imported.deliveredCount, 5)
    }

    func testAtLeastOnceEventsToADeniedSubjectAreRefusedWithTheReason() throws {
        let server = try makePermissionServer()
        defer { server.stop() }
        // The stream covers the denied subject: only the permission stands in the way.
        let adminBridge = try NATSBridge(
            options: NATSOptions(
                servers: [server.url], credentials: .userPassword(user: "admin", password: "adminpass")))
        defer { adminBridge.close() }
        let stream = NATSStream(name: "PERM", subjects: ["perm.>"])
        try adminBridge.export(Event<Int>(), to: "perm.no.values", delivery: .atLeastOnce(stream: stream))
        let log = StatusLog()
        let bridge = try NATSBridge(options: limitedOptions(server), status: log.event)
        defer { bridge.close() }
        let local = Event<Int>()
        let export = try bridge.export(local, to: "perm.no.values", delivery: .atLeastOnce(stream: stream))
        for value in 1...5 { local.send(value) }
        XCTAssertTrue(waitUntil(timeout: 30) { bridge.pendingPublishes == 0 }, "given up, not pending for good")
        XCTAssertEqual(export.refusedPublishes, 5)
        XCTAssertEqual(export.failedPublishes, 5)
        XCTAssertEqual(refusedCount(log), 5)
        let reasons = log.values.compactMap { status -> String? in
            if case .refused("perm.no.values", _, let reason) = status { reason } else { nil }
        }
        XCTAssertTrue(
            !reasons.isEmpty && reasons.allSatisfy { $0.contains("Permissions Violation for Publish") }, "\(reasons)")
        XCTAssertEqual(bridge.close(), 0)
    }

    /// The denials table holds an export's at-most-once publishers (strongly, with no weak
    /// reference whose side table LeakSanitizer would report) only until the export stops:
    /// cancelled, or stopped by the bridge's close. The bridge's JetStream context leaves it
    /// when the bridge closes.
    func testTheDenialsTableHoldsAnExportsPublishersOnlyUntilItStops() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let bridge = try NATSBridge(options: NATSOptions(servers: [server.url]))
        defer { bridge.close() }
        let denials = bridge.callbacks.denials
        let cancelled = try bridge.export(Event<Int>(), to: "held.cancelled")
        let keyed = try bridge.export(KeyedEvent<String, Int>(), keys: ["a", "b"], toPrefix: "held.keyed")
        let stream = NATSStream(name: "HELD", subjects: ["held.stored"])
        let stored = try bridge.export(Event<Int>(), to: "held.stored", delivery: .atLeastOnce(stream: stream))
        XCTAssertEqual(denials.registeredPublisherCount(of: "held.cancelled"), 1)
        XCTAssertEqual(denials.registeredPublisherCount(of: "held.keyed.a"), 1)
        XCTAssertEqual(denials.registeredPublisherCount(of: "held.keyed.b"), 1)
        XCTAssertEqual(denials.registeredPublisherCount(of: "held.stored"), 0, "the JetStream context takes these")
        XCTAssertTrue(denials.hasJetStream)
        cancelled.cancel()
        XCTAssertEqual(denials.registeredPublisherCount(of: "held.cancelled"), 0, "out when cancelled")
        XCTAssertEqual(denials.registeredPublisherCount(of: "held.keyed.a"), 1)
        bridge.close()
        XCTAssertEqual(denials.registeredPublisherCount(of: "held.keyed.a"), 0, "out when the bridge closed")
        XCTAssertEqual(denials.registeredPublisherCount(of: "held.keyed.b"), 0)
        XCTAssertFalse(denials.hasJetStream)
        XCTAssertFalse(keyed.isActive)
        XCTAssertFalse(stored.isActive)
    }
}
