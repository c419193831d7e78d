import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// At-least-once across failures, with servers the test starts: `kill -9` of the node of a
/// 3-node cluster that leads both the R3 stream and the consumer, and a 10 s outage of a
/// single server. Observers get every event exactly once. Each run prints its account
/// (delivered, lost, duplicated, out of order); `OBSERVER_FAILOVER_EVENTS` changes the
/// number of events.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSFailoverTests: XCTestCase {
    static let eventCount = Int(ProcessInfo.processInfo.environment["OBSERVER_FAILOVER_EVENTS"] ?? "") ?? 20_000

    /// Sends 1...eventCount on `event` from a thread of its own, pausing 1 ms every 20
    /// events (20 000 events/s at most), and runs `fault` once `faultAt` are sent.
    func send(_ event: Event<Int>, faultAt: Int, fault: @escaping @Sendable () -> Void) -> Thread {
        let sender = Thread {
            for value in 1...Self.eventCount {
                if value == faultAt { fault() }
                event.send(value)
                if value % 20 == 0 { usleep(1_000) }
            }
        }
        sender.start()
        return sender
    }

    func testAtLeastOnceLosesNothingAndDuplicatesNothingWhenTheStreamAndConsumerLeaderIsKilled() throws {
        let cluster = try OwnedNATSCluster()
        defer { cluster.stop() }
        let admin = try cluster.waitUntilReady()
        var options = NATSOptions(servers: cluster.urls)
        options.reconnectWait = .milliseconds(100)
        options.consumerHeartbeat = .milliseconds(500)
        options.pendingLimits = .init(messages: 1_000_000, bytes: 1 << 30)
        let publisherLog = StatusLog()
        let subscriberLog = StatusLog()
        let publisher = try NATSBridge(options: options, status: publisherLog.event)
        let subscriber = try NATSBridge(options: options, status: subscriberLog.event)
        defer {
            publisher.close()
            subscriber.close()
        }
        let stream = NATSStream(name: "FAILOVER", subjects: ["failover.>"], replicas: 3)
        let local = Event<Int>()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try subscriber.import(
            "failover.values", into: remote,
            delivery: .atLeastOnce(stream: stream, durable: "observer", redeliveryWait: .seconds(1)))
        let export = try publisher.export(local, to: "failover.values", delivery: .atLeastOnce(stream: stream))

        // The node to kill leads the stream and the consumer: move the consumer's leadership
        // until it sits with the stream's.
        let streamLeader = try XCTUnwrap(waitForLeader { admin.leader(stream: "FAILOVER") })
        var consumerLeader = admin.leader(stream: "FAILOVER", durable: "observer")
        for _ in 0..<20 where consumerLeader != streamLeader {
            admin.request("CONSUMER.LEADER.STEPDOWN.FAILOVER.observer")
            consumerLeader = waitForLeader { admin.leader(stream: "FAILOVER", durable: "observer") }
        }
        XCTAssertEqual(consumerLeader, streamLeader, "the consumer leader moved to the stream leader")
        let victim = try XCTUnwrap(cluster.index(of: streamLeader))

        let start = Date()
        let killed = LockedValue<Date?>(nil)
        let sender = send(local, faultAt: Self.eventCount / 3) {
            cluster.kill9(victim)
            killed.value = Date()
        }
        let verbose = ProcessInfo.processInfo.environment["OBSERVER_FAILOVER_VERBOSE"] != nil
        let sampler = Thread {
            while verbose && Set(received.values).count < Self.eventCount && Date().timeIntervalSince(start) < 60 {
                print(
                    String(format: "%.1f", Date().timeIntervalSince(start)), "s: pending", publisher.pendingPublishes,
                    "received", received.count, "stream leader", admin.leader(stream: "FAILOVER") ?? "none")
                usleep(500_000)
            }
        }
        sampler.start()
        XCTAssertTrue(waitUntil(timeout: 60) { sender.isFinished })
        let sent = Date()
        XCTAssertEqual(publisher.flush(timeout: .seconds(60)), 0, "every publish stored")
        let stored = Date()
        XCTAssertTrue(waitUntil(timeout: 60) { Set(received.values).count >= Self.eventCount })
        let complete = Date()
        // Redeliveries of messages whose acknowledgment the kill lost come after the redelivery wait:
        // none may reach the observers within 2.5 s.
        XCTAssertFalse(
            received.wait(forCount: Self.eventCount + 1, timeout: 2.5),
            "a redelivered copy reached the observers: \(received.count) values for \(Self.eventCount) events")
        let account = DeliveryAccount(received.values, expected: Self.eventCount)
        if ProcessInfo.processInfo.environment["OBSERVER_FAILOVER_VERBOSE"] != nil {
            print("subscriber statuses: \(subscriberLog.values)\npublisher statuses: \(publisherLog.values)")
        }
        print(
            "cluster, kill -9 of stream and consumer leader \(streamLeader): \(account); "
                + "\(imported.duplicateCount) redelivered copies dropped, \(export.failedPublishes) failed publishes, "
                + "stalls \(subscriberLog.count { if case .consumerStalled = $0 { true } else { false } }); "
                + "after the start: killed \(seconds(killed.value, start)) s, all sent \(seconds(sent, start)) s, "
                + "all stored \(seconds(stored, start)) s, all delivered \(seconds(complete, start)) s")
        XCTAssertEqual(account.lost, 0)
        XCTAssertEqual(account.duplicated, 0)
        XCTAssertEqual(account.delivered, Self.eventCount)
        XCTAssertEqual(export.failedPublishes, 0)
        XCTAssertEqual(unconfirmedCount(publisherLog), 0)
        XCTAssertEqual(refusedCount(publisherLog), 0)
    }

    func testAtLeastOnceLosesNothingAndDuplicatesNothingAcrossATenSecondServerOutage() throws {
        let server = try OwnedNATSServer()
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(100)
        options.consumerHeartbeat = .milliseconds(500)
        // A small reconnect buffer: most publishes made during the outage wait in the retry queue.
        options.reconnectBufferBytes = 64 * 1024
        options.pendingLimits = .init(messages: 1_000_000, bytes: 1 << 30)
        let publisherLog = StatusLog()
        let subscriberLog = StatusLog()
        let (publisher, subscriber) = try makeBridgePair(
            stoppingAfterwards: server, publisherOptions: options, publisherStatus: publisherLog.event,
            subscriberOptions: options, subscriberStatus: subscriberLog.event)
        let stream = NATSStream(name: "OUTAGE", subjects: ["outage.>"])
        let local = Event<Int>()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try subscriber.import(
            "outage.values", into: remote,
            delivery: .atLeastOnce(stream: stream, durable: "observer", redeliveryWait: .seconds(1)))
        let export = try publisher.export(local, to: "outage.values", delivery: .atLeastOnce(stream: stream))

        let restartError = LockedValue<Error?>(nil)
        let start = Date()
        let sender = send(local, faultAt: Self.eventCount / 4) {
            server.kill9()
            let restarter = Thread {
                usleep(10_000_000)
                do { try server.restart() } catch { restartError.value = error }
            }
            restarter.start()
        }
        XCTAssertTrue(waitUntil(timeout: 60) { sender.isFinished })
        XCTAssertTrue(
            waitUntil(timeout: 30) {
                publisherLog.values.contains { if case .reconnected = $0 { true } else { false } }
            })
        XCTAssertNil(restartError.value)
        XCTAssertEqual(publisher.flush(timeout: .seconds(60)), 0, "every publish stored")
        XCTAssertTrue(waitUntil(timeout: 60) { Set(received.values).count >= Self.eventCount })
        // Redeliveries come after the redelivery wait: none may reach the observers within 2.5 s.
        XCTAssertFalse(
            received.wait(forCount: Self.eventCount + 1, timeout: 2.5),
            "a redelivered copy reached the observers: \(received.count) values for \(Self.eventCount) events")
        let account = DeliveryAccount(received.values, expected: Self.eventCount)
        print(
            "single server, 10 s outage: \(account); \(imported.duplicateCount) redelivered copies dropped, "
                + "\(export.failedPublishes) failed publishes, "
                + "\(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        XCTAssertEqual(account.lost, 0)
        XCTAssertEqual(account.duplicated, 0)
        XCTAssertEqual(account.delivered, Self.eventCount)
        XCTAssertEqual(export.failedPublishes, 0)
    }

    func seconds(_ date: Date?, _ start: Date) -> String {
        date.map { String(format: "%.1f", $0.timeIntervalSince(start)) } ?? "-"
    }

    /// Polls `leader` every 100 ms for up to 15 s.
    func waitForLeader(_ leader: () -> String?) -> String? {
        var found: String?
        _ = waitUntil(timeout: 15) {
            found = leader()
            if found == nil { usleep(100_000) }
            return found != nil
        }
        return found
    }
}
