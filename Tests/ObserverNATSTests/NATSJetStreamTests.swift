import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// At-least-once against one server the test owns: pending counts, flush, close that
/// reports what it gave up, configuration conflicts, refused publishes counted
/// exactly, and consumer liveness.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSJetStreamTests: XCTestCase {
    func options(_ server: OwnedNATSServer, _ configure: (inout NATSOptions) -> Void = { _ in }) -> NATSOptions {
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        configure(&options)
        return options
    }

    func testFlushWaitsForEveryAcknowledgmentAndCloseReportsExactlyWhatWasNotAcknowledged() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(options: options(server), status: log.event)
        let stream = NATSStream(name: "FLUSH", subjects: ["flush.>"])
        let local = Event<Int>()
        let export = try bridge.export(local, to: "flush.values", delivery: .atLeastOnce(stream: stream))
        for value in 1...500 { local.send(value) }
        XCTAssertEqual(bridge.flush(timeout: .seconds(20)), 0, "every publish acknowledged")
        XCTAssertEqual(bridge.pendingPublishes, 0)

        server.kill9()
        XCTAssertTrue(waitUntil { log.values.contains(.disconnected) })
        for value in 501...600 { local.send(value) }
        XCTAssertEqual(bridge.pendingPublishes, 100, "unacknowledged while the server is gone")
        XCTAssertEqual(bridge.flush(timeout: .milliseconds(300)), 100, "flush reports what is still pending")
        let givenUp = bridge.close(timeout: .milliseconds(300))
        XCTAssertEqual(givenUp, 100, "close gives up exactly the unacknowledged publishes")
        XCTAssertEqual(unconfirmedCount(log), 100)
        XCTAssertEqual(export.unconfirmedPublishes, 100)
        XCTAssertEqual(export.failedPublishes, 100)
        XCTAssertEqual(bridge.pendingPublishes, 0)
        XCTAssertEqual(bridge.close(), 100, "a second close gives up nothing more and reports the first one's count")
        XCTAssertEqual(export.failedPublishes, 100)
    }

    func testAnExportToASubjectItsStreamDoesNotStoreIsAnErrorAtExportTime() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let bridge = try NATSBridge(options: options(server))
        defer { bridge.close() }
        let orders = NATSStream(name: "ORDERS", subjects: ["orders.>"])
        XCTAssertThrowsError(
            try bridge.export(Event<Int>(), to: "invoices.new", delivery: .atLeastOnce(stream: orders))
        ) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .jetStream)
            XCTAssertTrue("\(error)".contains("no stream stores invoices.new"), "\(error)")
        }
        let invoices = NATSStream(name: "INVOICES", subjects: ["invoices.>"])
        try bridge.export(Event<Int>(), to: "invoices.new", delivery: .atLeastOnce(stream: invoices))
        XCTAssertThrowsError(
            try bridge.export(Event<Int>(), to: "invoices.paid", delivery: .atLeastOnce(stream: orders))
        ) { error in
            XCTAssertTrue("\(error)".contains("stored by stream INVOICES, not ORDERS"), "\(error)")
        }
        XCTAssertEqual(bridge.pendingPublishes, 0)
    }

    func testAStreamOrConsumerThatExistsWithAnotherConfigurationIsAnErrorNamingTheDifferences() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let bridge = try NATSBridge(options: options(server))
        defer { bridge.close() }
        let created = NATSStream(name: "CONF", subjects: ["conf.>"], storage: .memory, maxAge: .seconds(3600))
        try bridge.export(Event<Int>(), to: "conf.a", delivery: .atLeastOnce(stream: created))
        try bridge.export(Event<Int>(), to: "conf.b", delivery: .atLeastOnce(stream: created))

        var other = created
        other.subjects = ["other.>"]
        other.storage = .file
        other.maxAge = .zero  // states "no age limit"; nil would take the server's
        other.retention = .workQueue
        XCTAssertThrowsError(try bridge.export(Event<Int>(), to: "other.a", delivery: .atLeastOnce(stream: other))) {
            error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("stream CONF exists with another configuration"), text)
            XCTAssertTrue(text.contains("subjects [\"conf.>\"] (wanted [\"other.>\"])"), text)
            XCTAssertTrue(text.contains("storage memory (wanted file)"), text)
            XCTAssertTrue(text.contains("retention limits (wanted workQueue)"), text)
            XCTAssertTrue(text.contains("max age 3600.0 s (wanted unlimited)"), text)
        }
        XCTAssertThrowsError(
            try bridge.export(
                Event<Int>(), to: "x.a",
                delivery: .atLeastOnce(stream: NATSStream(name: "X", subjects: ["x.>"], replicas: 0)))
        ) { error in XCTAssertEqual((error as? NATSError)?.kind, .invalidOption) }

        try bridge.import(
            "conf.a", into: Event<Int>(), delivery: .atLeastOnce(stream: created, durable: "reader"))
        let reusedWithAnotherFilter = Event<Int>()
        XCTAssertThrowsError(
            try bridge.import(
                "conf.b", into: reusedWithAnotherFilter, delivery: .atLeastOnce(stream: created, durable: "reader"))
        ) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("consumer reader of stream CONF exists with another configuration"), text)
            XCTAssertTrue(text.contains("filter subject \"conf.a\" (wanted \"conf.b\")"), text)
        }
        XCTAssertThrowsError(
            try bridge.import(
                "conf.a", into: Event<Int>(),
                delivery: .atLeastOnce(stream: created, durable: "reader", redeliveryWait: .seconds(9)))
        ) { error in XCTAssertTrue("\(error)".contains("ack wait 2.0 s (wanted 9.0 s)"), "\(error)") }
    }

    func testPublishesAStreamLimitRefusesAreReportedWithTheirExactCount() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let admin = try JetStreamAdmin(url: server.url)
        let limited = admin.request(
            "STREAM.CREATE.LIMITED",
            [
                "name": "LIMITED", "subjects": ["limited.>"], "max_msgs": 10, "discard": "new", "storage": "file",
                "retention": "limits", "num_replicas": 1, "duplicate_window": 120_000_000_000,
            ])
        XCTAssertNil(limited?["error"], "\(limited ?? [:])")
        let log = StatusLog()
        let bridge = try NATSBridge(options: options(server), status: log.event)
        defer { bridge.close() }
        let local = Event<Int>()
        let export = try bridge.export(
            local, to: "limited.values",
            delivery: .atLeastOnce(stream: NATSStream(name: "LIMITED", subjects: ["limited.>"])))
        for value in 1...25 {
            local.send(value)
            // One at a time, so that exactly the first ten are stored.
            XCTAssertEqual(bridge.flush(timeout: .seconds(10)), 0)
        }
        XCTAssertEqual(export.refusedPublishes, 15)
        XCTAssertEqual(bridge.refusedPublishes, 15)
        XCTAssertEqual(refusedCount(log), 15)
        let reasons = log.values.compactMap { status -> String? in
            if case .refused(_, _, let reason) = status { reason } else { nil }
        }
        XCTAssertTrue(reasons.allSatisfy { $0.contains("maximum messages") }, "\(reasons)")
        XCTAssertEqual(bridge.pendingPublishes, 0)
    }

    func testAnObserverOfARefusedStatusCanCloseTheBridge() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let admin = try JetStreamAdmin(url: server.url)
        let limited = admin.request(
            "STREAM.CREATE.ONE",
            [
                "name": "ONE", "subjects": ["one.>"], "max_msgs": 1, "discard": "new", "storage": "file",
                "retention": "limits", "num_replicas": 1, "duplicate_window": 120_000_000_000,
            ])
        XCTAssertNil(limited?["error"], "\(limited ?? [:])")
        let status = Event<NATSStatus>()
        let bridge = try NATSBridge(options: options(server), status: status)
        let closedBy = LockedValue<Int?>(nil)
        let closeClaim = FirstClaim()
        // The close waits until all 50 sends have returned: a send made after the close has
        // cancelled the export reaches no export, so it is no publish and nobody counts it.
        let sendsReturned = DispatchSemaphore(value: 0)
        let token = status.subscribe { [weak bridge] status in
            // Runs on the bridge's retry thread: closing from there must neither wait for
            // that thread nor publish through the destroyed context afterwards.
            guard case .refused = status else { return }
            guard closeClaim.claim() else { return }
            XCTAssertEqual(sendsReturned.wait(timeout: .now() + 30), .success)
            closedBy.value = bridge?.close(timeout: .milliseconds(500))
        }
        defer { token.cancel() }
        let local = Event<Int>()
        let export = try bridge.export(
            local, to: "one.values", delivery: .atLeastOnce(stream: NATSStream(name: "ONE", subjects: ["one.>"])))
        for value in 1...50 { local.send(value) }
        sendsReturned.signal()
        XCTAssertTrue(waitUntil(timeout: 30) { bridge.isClosed && closedBy.value != nil })
        // The retry thread gives up the rest of its batch after the observer's `close` returned.
        XCTAssertTrue(waitUntil(timeout: 10) { bridge.pendingPublishes == 0 })
        XCTAssertEqual(export.failedPublishes, 49, "one stored, every other one given up and counted")
        let givenUp = bridge.refusedPublishes + bridge.unconfirmedPublishes
        XCTAssertGreaterThan(bridge.refusedPublishes, 0, "the refused one was given up")
        XCTAssertLessThanOrEqual(givenUp, 49)
        XCTAssertEqual(export.refusedPublishes + export.unconfirmedPublishes, givenUp)
    }

    func testPublishesToADeletedStreamAreReportedWithTheirExactCountAndNotRepublishedForever() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let admin = try JetStreamAdmin(url: server.url)
        let log = StatusLog()
        let bridge = try NATSBridge(options: options(server), status: log.event)
        defer { bridge.close() }
        let local = Event<Int>()
        let export = try bridge.export(
            local, to: "gone.values", delivery: .atLeastOnce(stream: NATSStream(name: "GONE", subjects: ["gone.>"])))
        for value in 1...10 { local.send(value) }
        XCTAssertEqual(bridge.flush(timeout: .seconds(10)), 0)
        XCTAssertEqual(admin.request("STREAM.DELETE.GONE")?["success"] as? Bool, true)
        for value in 11...30 { local.send(value) }
        XCTAssertTrue(waitUntil(timeout: 30) { bridge.pendingPublishes == 0 }, "given up within the check interval")
        XCTAssertEqual(export.refusedPublishes, 20)
        XCTAssertEqual(refusedCount(log), 20)
        let reasons = log.values.compactMap { status -> String? in
            if case .refused("gone.values", _, let reason) = status { reason } else { nil }
        }
        XCTAssertFalse(reasons.isEmpty)
        XCTAssertTrue(reasons.allSatisfy { $0 == "stream GONE does not exist" }, "\(reasons)")
    }

    func testIdleHeartbeatsAreNotMessagesAndAConsumerThatStopsIsReportedAndRecreated() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let admin = try JetStreamAdmin(url: server.url)
        let log = StatusLog()
        let bridge = try NATSBridge(
            options: options(server) { $0.consumerHeartbeat = .milliseconds(200) }, status: log.event)
        defer { bridge.close() }
        let stream = NATSStream(name: "LIVE", subjects: ["live.>"])
        let local = Event<Int>()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        try bridge.export(local, to: "live.values", delivery: .atLeastOnce(stream: stream))
        let imported = try bridge.import(
            "live.values", into: remote, delivery: .atLeastOnce(stream: stream, durable: "watched"))
        // Idle for ten heartbeat intervals: heartbeats arrive, none is a message or a stall.
        XCTAssertFalse(
            log.statuses.wait(timeout: 2) { statuses in
                statuses.contains {
                    switch $0 {
                    case .consumerStalled, .malformed: true
                    default: false
                    }
                }
            }, "a heartbeat was taken for a message or a stall: \(log.values)")
        XCTAssertEqual(received.values, [])
        XCTAssertEqual(imported.malformedCount, 0)
        XCTAssertEqual(imported.deliveredCount, 0)
        XCTAssertFalse(log.values.contains { if case .consumerStalled = $0 { true } else { false } })

        // The consumer disappears behind the bridge's back: no heartbeat, no message.
        XCTAssertEqual(admin.request("CONSUMER.DELETE.LIVE.watched")?["success"] as? Bool, true)
        XCTAssertTrue(
            waitUntil(timeout: 10) {
                log.values.contains(.consumerStalled(subject: "live.values", durable: "watched"))
            })
        XCTAssertTrue(
            waitUntil(timeout: 10) {
                log.values.contains(.consumerRecovered(subject: "live.values", durable: "watched"))
            })
        for value in 1...100 { local.send(value) }
        XCTAssertTrue(waitUntil(timeout: 10) { received.count == 100 })
        XCTAssertEqual(received.values, Array(1...100))
        XCTAssertEqual(imported.malformedCount, 0)
    }

    /// Replaces the consumer with one that pushes to another subject (a consumer that exists but
    /// no longer reaches the import), keeping the rest of its configuration. The server refuses
    /// to change the deliver subject of a consumer with a subscriber, hence delete and create.
    func divert(_ admin: JetStreamAdmin, stream: String, durable: String, filter: String) -> [String: Any]? {
        admin.request("CONSUMER.DELETE.\(stream).\(durable)")
        return admin.request(
            "CONSUMER.DURABLE.CREATE.\(stream).\(durable)",
            [
                "stream_name": stream,
                "config": [
                    "durable_name": durable, "deliver_subject": "elsewhere.\(durable)", "filter_subject": filter,
                    "ack_policy": "explicit", "ack_wait": 2_000_000_000, "idle_heartbeat": 200_000_000,
                    "flow_control": true, "max_ack_pending": 65_536, "deliver_policy": "all",
                ],
            ])
    }

    func testAConsumerThatNoLongerReachesTheImportIsRecreatedUnderLimitsRetentionAndKeptOtherwise() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let admin = try JetStreamAdmin(url: server.url)
        let log = StatusLog()
        let bridge = try NATSBridge(
            options: options(server) { $0.consumerHeartbeat = .milliseconds(200) }, status: log.event)
        defer { bridge.close() }
        for retention in [NATSStream.Retention.limits, .interest] {
            let name = retention == .limits ? "DIVERTLIMITS" : "DIVERTINTEREST"
            let subject = "\(name.lowercased()).values"
            let stream = NATSStream(name: name, subjects: ["\(name.lowercased()).>"], retention: retention)
            let local = Event<Int>()
            let remote = Event<Int>()
            let received = Received<Int>()
            let token = remote.subscribe { received.append($0) }
            defer { token.cancel() }
            try bridge.export(local, to: subject, delivery: .atLeastOnce(stream: stream))
            try bridge.import(subject, into: remote, delivery: .atLeastOnce(stream: stream, durable: "diverted"))
            for value in 1...10 { local.send(value) }
            XCTAssertTrue(waitUntil { received.count == 10 })
            let diverted = divert(admin, stream: name, durable: "diverted", filter: subject)
            XCTAssertNil(diverted?["error"], "\(diverted ?? [:])")
            XCTAssertTrue(
                waitUntil { log.values.contains(.consumerStalled(subject: subject, durable: "diverted")) }, name)
            switch retention {
            case .limits:
                XCTAssertTrue(
                    waitUntil { log.values.contains(.consumerRecovered(subject: subject, durable: "diverted")) })
                for value in 11...20 { local.send(value) }
                XCTAssertTrue(waitUntil { received.count == 20 })
                XCTAssertEqual(received.values, Array(1...20))
            default:
                XCTAssertTrue(
                    waitUntil {
                        log.values.contains {
                            if case .error(let text) = $0 { text.contains("retention is interest") } else { false }
                        }
                    })
                let config = admin.request("CONSUMER.INFO.\(name).diverted")?["config"] as? [String: Any]
                XCTAssertEqual(config?["deliver_subject"] as? String, "elsewhere.diverted", "left alone")
            }
        }
    }
}

/// True for the first `claim()` only, from any thread.
final class FirstClaim: @unchecked Sendable {
    // @unchecked: `claimed` is only touched while `lock` is held.
    private let lock = NSLock()
    private var claimed = false

    func claim() -> Bool {
        lock.withLock {
            defer { claimed = true }
            return !claimed
        }
    }
}
