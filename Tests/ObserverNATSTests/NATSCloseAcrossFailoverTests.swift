import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// At-least-once publishing that ends with `close()` while the cluster recovers: `kill -9`
/// of the stream's leader and a leader step-down, in a 3-node cluster the test starts; a
/// consumer reconfigured from outside; and a long outage with the retry queue full.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSCloseAcrossFailoverTests: XCTestCase {
    static let eventCount = 5_000

    /// Messages the stream holds once its count has stopped changing (asked of every node
    /// that answers, for up to 60 s).
    func storedCount(_ cluster: OwnedNATSCluster, stream: String) -> Int? {
        var last: Int?
        var stableSince = Date()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            var count: Int?
            for url in cluster.urls {
                guard let admin = try? JetStreamAdmin(url: url),
                    let state = admin.request("STREAM.INFO.\(stream)")?["state"] as? [String: Any],
                    let messages = state["messages"] as? Int
                else { continue }
                count = messages
                break
            }
            if let count, count == last {
                if Date().timeIntervalSince(stableSince) > 2 { return count }
            } else {
                last = count
                stableSince = Date()
            }
            usleep(250_000)
        }
        return last
    }

    func clusterOptions(_ cluster: OwnedNATSCluster) -> NATSOptions {
        var options = NATSOptions(servers: cluster.urls)
        options.reconnectWait = .milliseconds(100)
        options.consumerHeartbeat = .milliseconds(500)
        options.pendingLimits = .init(messages: 1_000_000, bytes: 1 << 30)
        return options
    }

    /// The at-least-once example of the AcrossProcesses article (publish, then `close()` with
    /// its defaults), with the stream's leader killed right after the sends.
    func testCloseWithItsDefaultsLosesNothingWhenTheStreamLeaderIsKilledRightAfterTheSends() throws {
        let cluster = try OwnedNATSCluster()
        defer { cluster.stop() }
        let admin = try cluster.waitUntilReady()
        let log = StatusLog()
        let publisher = try NATSBridge(options: clusterOptions(cluster), status: log.event)
        let stream = NATSStream(name: "CLOSEKILL", subjects: ["closekill.>"], replicas: 3)
        let placed = Event<Int>()
        try publisher.export(placed, to: "closekill.values", delivery: .atLeastOnce(stream: stream))
        let leader = try XCTUnwrap(waitForLeader { admin.leader(stream: "CLOSEKILL") })
        let victim = try XCTUnwrap(cluster.index(of: leader))
        for value in 1...Self.eventCount {
            placed.send(value)
            if value == Self.eventCount / 2 { cluster.kill9(victim) }
        }
        let givenUp = publisher.close()
        let stored = storedCount(cluster, stream: "CLOSEKILL")
        print(
            "close() across kill -9 of stream leader \(leader): gave up \(givenUp), unconfirmed statuses "
                + "\(unconfirmedCount(log)), stored \(stored ?? -1) of \(Self.eventCount)")
        XCTAssertEqual(stored, Self.eventCount, "every event stored")
        XCTAssertEqual(givenUp, 0, "close confirmed every event")
        XCTAssertEqual(unconfirmedCount(log) + refusedCount(log), givenUp)
    }

    func testAtLeastOnceLosesNothingAndDuplicatesNothingAcrossAStreamLeaderStepDown() throws {
        let cluster = try OwnedNATSCluster()
        defer { cluster.stop() }
        let admin = try cluster.waitUntilReady()
        let publisherLog = StatusLog()
        let publisher = try NATSBridge(options: clusterOptions(cluster), status: publisherLog.event)
        let subscriber = try NATSBridge(options: clusterOptions(cluster))
        defer { subscriber.close() }
        let stream = NATSStream(name: "STEPDOWN", subjects: ["stepdown.>"], replicas: 3)
        let local = Event<Int>()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try subscriber.import(
            "stepdown.values", into: remote,
            delivery: .atLeastOnce(stream: stream, durable: "observer", redeliveryWait: .seconds(1)))
        let export = try publisher.export(local, to: "stepdown.values", delivery: .atLeastOnce(stream: stream))
        let before = try XCTUnwrap(waitForLeader { admin.leader(stream: "STEPDOWN") })
        for value in 1...Self.eventCount {
            local.send(value)
            if value == Self.eventCount / 2 {
                let answer = admin.request("STREAM.LEADER.STEPDOWN.STEPDOWN")
                XCTAssertEqual(answer?["success"] as? Bool, true, "\(answer ?? [:])")
            }
            if value % 20 == 0 { usleep(1_000) }
        }
        let givenUp = publisher.close()
        XCTAssertTrue(waitUntil(timeout: 60) { Set(received.values).count >= Self.eventCount })
        // Redeliveries come after the redelivery wait: none may reach the observers within 2.5 s.
        XCTAssertFalse(
            received.wait(forCount: Self.eventCount + 1, timeout: 2.5),
            "a redelivered copy reached the observers: \(received.count) values for \(Self.eventCount) events")
        let account = DeliveryAccount(received.values, expected: Self.eventCount)
        let after = admin.leader(stream: "STEPDOWN")
        print(
            "step-down of stream leader \(before) (now \(after ?? "none")): \(account); "
                + "\(imported.duplicateCount) redelivered copies dropped, close gave up \(givenUp)")
        XCTAssertNotEqual(after, before, "the leadership moved")
        XCTAssertEqual(givenUp, 0)
        XCTAssertEqual(account.lost, 0)
        XCTAssertEqual(account.duplicated, 0)
        XCTAssertEqual(export.failedPublishes, 0)
    }

    func testAnImportKeepsDeliveringAfterItsConsumerIsReplacedWithAnotherConfigurationFromOutside() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let admin = try JetStreamAdmin(url: server.url)
        var options = NATSOptions(servers: [server.url])
        options.consumerHeartbeat = .milliseconds(300)
        let log = StatusLog()
        let bridge = try NATSBridge(options: options, status: log.event)
        defer { bridge.close() }
        let stream = NATSStream(name: "RECONF", subjects: ["reconf.>"])
        let local = Event<Int>()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        try bridge.import(
            "reconf.values", into: remote,
            delivery: .atLeastOnce(stream: stream, durable: "watcher", redeliveryWait: .seconds(1)))
        try bridge.export(local, to: "reconf.values", delivery: .atLeastOnce(stream: stream))
        for value in 1...100 { local.send(value) }
        XCTAssertTrue(waitUntil(timeout: 20) { Set(received.values).count == 100 })
        // Someone replaces the consumer with one of another configuration: deliveries go elsewhere,
        // without idle heartbeats or flow control.
        var config = try XCTUnwrap(admin.request("CONSUMER.INFO.RECONF.watcher")?["config"] as? [String: Any])
        config["deliver_subject"] = "elsewhere.watcher"
        config["idle_heartbeat"] = nil
        config["flow_control"] = nil
        XCTAssertEqual(admin.request("CONSUMER.DELETE.RECONF.watcher")?["success"] as? Bool, true)
        let replaced = admin.request(
            "CONSUMER.DURABLE.CREATE.RECONF.watcher", ["stream_name": "RECONF", "config": config])
        XCTAssertNil(replaced?["error"], "\(replaced ?? [:])")
        for value in 101...200 { local.send(value) }
        XCTAssertEqual(bridge.flush(timeout: .seconds(10)), 0)
        XCTAssertTrue(
            waitUntil(timeout: 30) { Set(received.values).count == 200 },
            "delivered \(Set(received.values).count) of 200; statuses \(log.values)")
        XCTAssertTrue(log.values.contains { if case .consumerStalled = $0 { true } else { false } })
        let account = DeliveryAccount(received.values, expected: 200)
        XCTAssertEqual(account.lost, 0)
        XCTAssertEqual(account.duplicated, 0)
    }

    /// The server is down for `OBSERVER_OUTAGE_SECONDS` (60 by default; `make reliability-long`
    /// runs 300) while the retry queue is full: memory and CPU time stay flat, and everything
    /// queued is stored after the restart.
    func testALongOutageWithTheRetryQueueFullKeepsMemoryAndCPUFlat() throws {
        let outage = Double(ProcessInfo.processInfo.environment["OBSERVER_OUTAGE_SECONDS"] ?? "") ?? 60
        let server = try OwnedNATSServer()
        defer { server.stop() }
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(100)
        options.reconnectBufferBytes = 64 * 1024
        options.maxPendingPublishes = 20_000
        // Statuses are counted, not kept: each send beyond the bound reports one.
        let status = Event<NATSStatus>()
        let disconnected = LockedValue(false)
        let token = status.subscribe { if $0 == .disconnected { disconnected.value = true } }
        defer { token.cancel() }
        let bridge = try NATSBridge(options: options, status: status)
        let local = Event<Int>()
        let export = try bridge.export(
            local, to: "outage.values", delivery: .atLeastOnce(stream: NATSStream(name: "LONG", subjects: ["outage.>"]))
        )
        XCTAssertEqual(bridge.flush(timeout: .seconds(10)), 0)
        server.kill9()
        XCTAssertTrue(waitUntil { disconnected.value })
        // Fill the retry queue, then keep sending a little: each send beyond the bound fails at once.
        var value = 0
        while bridge.pendingPublishes < options.maxPendingPublishes {
            value += 1
            local.send(value)
        }
        let queued = bridge.pendingPublishes
        var residentSamples: [Int] = []
        var cpuSamples: [Double] = []
        let start = Date()
        var lastCPU = processCPUSeconds()
        var lastSample = Date()
        while Date().timeIntervalSince(start) < outage {
            for _ in 0..<100 {
                value += 1
                local.send(value)
            }
            usleep(100_000)
            if Date().timeIntervalSince(lastSample) >= 5 {
                let cpu = processCPUSeconds()
                cpuSamples.append((cpu - lastCPU) / Date().timeIntervalSince(lastSample))
                lastCPU = cpu
                lastSample = Date()
                residentSamples.append(residentBytes())
            }
        }
        let half = residentSamples.count / 2
        let early = median(Array(residentSamples[..<half]).map(Double.init))
        let late = median(Array(residentSamples[half...]).map(Double.init))
        print(
            "outage \(Int(outage)) s, \(queued) queued: resident \(Int(early) / 1024) KiB -> \(Int(late) / 1024) KiB "
                + "(medians), CPU per second \(cpuSamples.map { String(format: "%.3f", $0) })")
        XCTAssertEqual(bridge.pendingPublishes, queued, "the queue stays at its bound")
        XCTAssertLessThan(late - early, 8 * 1024 * 1024, "memory grows during the outage")
        XCTAssertLessThan(median(cpuSamples), 0.25, "the bridge spins while the server is gone")
        try server.restart()
        XCTAssertEqual(bridge.flush(timeout: .seconds(60)), 0, "everything queued is stored after the restart")
        XCTAssertEqual(export.failedPublishes, value - queued, "exactly the sends beyond the bound failed")
        XCTAssertEqual(bridge.close(), 0)
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

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// User and system CPU time of this process so far, in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// This process's resident set, in bytes (Linux: `/proc/self/statm`; elsewhere 0).
func residentBytes() -> Int {
    #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
        return 0
    #endif
}
