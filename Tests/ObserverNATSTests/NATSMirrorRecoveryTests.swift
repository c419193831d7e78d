import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// A running mirror whose bucket is deleted and created again reports it, naming itself, and
/// hears the new bucket at once.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSMirrorRecoveryTests: XCTestCase {
    func testAMirrorWhoseBucketIsDeletedAndCreatedAgainReportsItAndHearsTheNewBucket() throws {
        let server = try OwnedNATSServer()
        let admin = try JetStreamAdmin(url: server.url)
        let log = StatusLog()
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        let (watching, writing) = try makeBridgePair(
            stoppingAfterwards: server, publisherOptions: options, publisherStatus: log.event,
            subscriberOptions: options)
        let here = ObservableValue(1)
        try watching.mirror(here, bucket: "recreated", key: "level")
        let there = ObservableValue(0)
        let writer = try writing.mirror(there, bucket: "recreated", key: "level")
        XCTAssertEqual(there.value, 1)
        there.value = 2
        XCTAssertTrue(waitUntil { here.value == 2 })
        XCTAssertEqual(admin.request("STREAM.DELETE.KV_recreated")?["success"] as? Bool, true)
        // Reported when the server's advisory of the deletion arrives (nats-server 2.9 does not
        // always send it); otherwise when the bucket is created again.
        let deleted = NATSStatus.mirrorStalled(
            bucket: "recreated", key: "level", reason: "bucket recreated was deleted")
        _ = waitUntil(timeout: 3) { log.values.contains(deleted) }
        writer.cancel()
        // Created again by a new mirror, which writes its value into the empty key.
        let start = Date()
        let again = ObservableValue(3)
        try writing.mirror(again, bucket: "recreated", key: "level")
        XCTAssertTrue(waitUntil(timeout: 30) { here.value == 3 }, "the mirror hears the bucket created again")
        let seconds = Date().timeIntervalSince(start)
        XCTAssertLessThan(seconds, 2, "deaf for \(seconds) s")
        XCTAssertTrue(waitUntil { log.values.contains(.mirrorRecovered(bucket: "recreated", key: "level")) })
        let mirrorStatuses = log.values.filter {
            switch $0 {
            case .mirrorStalled, .mirrorRecovered: true
            default: false
            }
        }
        let createdAgain = NATSStatus.mirrorStalled(
            bucket: "recreated", key: "level", reason: "bucket recreated was created again")
        XCTAssertTrue(
            [
                [deleted, .mirrorRecovered(bucket: "recreated", key: "level")],
                [createdAgain, .mirrorRecovered(bucket: "recreated", key: "level")],
            ].contains(mirrorStatuses),
            "\(mirrorStatuses)")
        // Both ways, as before.
        here.value = 4
        XCTAssertTrue(waitUntil { again.value == 4 })
        again.value = 5
        XCTAssertTrue(waitUntil { here.value == 5 })
        XCTAssertFalse(log.values.contains { if case .error = $0 { true } else { false } }, "\(log.values)")
    }

    func testAMirrorsWritesWhileItsBucketIsGoneWaitAndAreStoredInTheBucketCreatedAgain() throws {
        let server = try OwnedNATSServer()
        let admin = try JetStreamAdmin(url: server.url)
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        let log = StatusLog()
        let (watching, reading) = try makeBridgePair(
            stoppingAfterwards: server, publisherOptions: options, publisherStatus: log.event,
            subscriberOptions: options)
        let here = ObservableValue(1)
        let mirror = try watching.mirror(here, bucket: "interim", key: "level")
        let config = try XCTUnwrap(admin.request("STREAM.INFO.KV_interim")?["config"] as? [String: Any])
        XCTAssertEqual(admin.request("STREAM.DELETE.KV_interim")?["success"] as? Bool, true)
        here.value = 9
        // Republished while no stream stores it, never given up: neither refused nor lost, for 3 s.
        XCTAssertFalse(
            log.statuses.wait(timeout: 3) { statuses in
                statuses.contains {
                    switch $0 {
                    case .refused, .unconfirmed, .publishFailed: true
                    default: false
                    }
                }
            }, "the write was given up: \(log.values)")
        XCTAssertEqual(watching.pendingPublishes, 1)
        XCTAssertEqual(watching.refusedPublishes, 0)
        let created = admin.request("STREAM.CREATE.KV_interim", config)
        XCTAssertNil(created?["error"], "\(created ?? [:])")
        XCTAssertTrue(waitUntil { watching.pendingPublishes == 0 }, "stored in the bucket created again")
        XCTAssertEqual(mirror.publishedCount, 2)
        let there = ObservableValue(0)
        try reading.mirror(there, bucket: "interim", key: "level")
        XCTAssertEqual(there.value, 9, "a late joiner reads the write made while the bucket was gone")
    }
}
