import CNATS
import Foundation
import ObserverSwift
import ObserverTestSupport
import XCTest

@testable import ObserverNATS

/// "No responders" is judged per subject: a subject whose stream no longer stores it is given up
/// after the stream check interval, and republished with its own backoff meanwhile, however
/// healthy the bridge's other subjects are.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSNoRespondersTests: XCTestCase {
    /// Messages the bridge's connection has sent so far.
    func outMessages(_ bridge: NATSBridge) -> UInt64 {
        var statistics: OpaquePointer?
        guard natsStatistics_Create(&statistics) == NATS_OK else { return 0 }
        defer { natsStatistics_Destroy(statistics) }
        guard natsConnection_GetStats(bridge.connection.pointer, statistics) == NATS_OK else { return 0 }
        var outMessages: UInt64 = 0
        _ = natsStatistics_GetCounts(statistics, nil, nil, &outMessages, nil, nil)
        return outMessages
    }

    func testASubjectWithoutStreamIsRefusedOnItsOwnClockWhileAnotherSubjectIsAcknowledged() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let admin = try JetStreamAdmin(url: server.url)
        let log = StatusLog()
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        let bridge = try NATSBridge(options: options, status: log.event)
        defer { bridge.close() }
        let narrowed = Event<Int>()
        let narrowedExport = try bridge.export(
            narrowed, to: "silent.values",
            delivery: .atLeastOnce(stream: NATSStream(name: "SILENT", subjects: ["silent.>"])))
        let healthy = Event<Int>()
        let healthyExport = try bridge.export(
            healthy, to: "healthy.values",
            delivery: .atLeastOnce(stream: NATSStream(name: "HEALTHY", subjects: ["healthy.>"])))
        narrowed.send(0)
        healthy.send(0)
        XCTAssertEqual(bridge.flush(timeout: .seconds(10)), 0)
        var config = try XCTUnwrap(admin.request("STREAM.INFO.SILENT")?["config"] as? [String: Any])
        config["subjects"] = ["silent.other"]
        let updated = admin.request("STREAM.UPDATE.SILENT", config)
        XCTAssertNil(updated?["error"], "\(updated ?? [:])")

        // The healthy subject is acknowledged all along, every 5 ms.
        let stop = LockedValue(false)
        let healthySent = LockedValue(0)
        let sender = JoinableThread {
            var value = 1
            while !stop.value {
                healthy.send(value)
                healthySent.value = value
                value += 1
                usleep(5_000)
            }
        }
        let sentBefore = outMessages(bridge)
        let healthyBefore = healthySent.value
        let start = Date()
        for value in 1...20 { narrowed.send(value) }
        let refusedInTime = waitUntil(timeout: 8) { narrowedExport.refusedPublishes == 20 }
        let seconds = Date().timeIntervalSince(start)
        let sent = outMessages(bridge) - sentBefore
        let healthyPublished = UInt64(healthySent.value - healthyBefore)
        stop.value = true
        sender.join()
        XCTAssertTrue(refusedInTime, "after \(seconds) s, \(narrowedExport.refusedPublishes) of 20 refused")
        XCTAssertLessThan(seconds, 5, "refused after the 2 s check interval, not later")
        // Each of the 20 is republished at most about 10 times (25 ms doubling to 1 s) in the
        // interval; the healthy subject's publishes and the stream lookups are the rest.
        let republished = sent - min(sent, healthyPublished)
        XCTAssertLessThan(republished, 20 * 12 + 20, "\(sent) messages sent, \(healthyPublished) of them healthy")
        XCTAssertEqual(narrowedExport.unconfirmedPublishes, 0)
        XCTAssertEqual(healthyExport.failedPublishes, 0, "the healthy subject lost nothing")
        let reasons = log.values.compactMap { status -> String? in
            if case .refused("silent.values", _, let reason) = status { reason } else { nil }
        }
        XCTAssertTrue(reasons.allSatisfy { $0 == "stream SILENT no longer stores silent.values" }, "\(reasons)")
        XCTAssertEqual(bridge.flush(timeout: .seconds(10)), 0)
    }

    func testCloseGivesUpASilentSubjectsEventsAsUnconfirmedWhileAnotherSubjectIsAcknowledged() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let admin = try JetStreamAdmin(url: server.url)
        let log = StatusLog()
        let bridge = try NATSBridge(options: NATSOptions(servers: [server.url]), status: log.event)
        let silent = Event<Int>()
        let silentExport = try bridge.export(
            silent, to: "quiet.values", delivery: .atLeastOnce(stream: NATSStream(name: "QUIET", subjects: ["quiet.>"]))
        )
        let healthy = Event<Int>()
        try bridge.export(
            healthy, to: "steady.values",
            delivery: .atLeastOnce(stream: NATSStream(name: "STEADY", subjects: ["steady.>"])))
        XCTAssertEqual(admin.request("STREAM.DELETE.QUIET")?["success"] as? Bool, true)
        for value in 1...20 {
            silent.send(value)
            healthy.send(value)
        }
        XCTAssertTrue(waitUntil { bridge.pendingPublishes == 20 }, "the healthy subject's are acknowledged")
        // Well within the 2 s before the stream check: given up by the close, as unconfirmed.
        let count = bridge.close(timeout: .milliseconds(300))
        XCTAssertEqual(count, 20)
        XCTAssertEqual(silentExport.unconfirmedPublishes, 20)
        XCTAssertEqual(silentExport.refusedPublishes, 0)
        XCTAssertEqual(unconfirmedCount(log), 20)
        XCTAssertEqual(bridge.pendingPublishes, 0)
    }
}
