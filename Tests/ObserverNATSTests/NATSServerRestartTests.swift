import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// The server is killed (`kill -9`) and restarted on the same port while 100 000 events
/// are being sent: at-least-once loses none and duplicates none; at-most-once reports
/// exactly how many did not arrive.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSServerRestartTests: XCTestCase {
    static let eventCount = 100_000
    static let killAt = 30_000

    func options(_ server: OwnedNATSServer) -> NATSOptions {
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        options.reconnectBufferBytes = 256 * 1024 * 1024
        options.pendingLimits = .init(messages: 1_000_000, bytes: 1 << 30)
        return options
    }

    /// Sends 1...eventCount on `event`, kills the server at `killAt`, restarts it from another
    /// thread, and sends the last 1 000 only once both bridges have reconnected.
    func sendAcrossAKill(
        _ event: Event<Int>, server: OwnedNATSServer, publisherLog: StatusLog, subscriberLog: StatusLog
    ) throws {
        let restartError = LockedValue<Error?>(nil)
        let sender = Thread {
            var restarter: JoinableThread?
            for value in 1...Self.eventCount {
                if value == Self.killAt {
                    server.kill9()
                    restarter = JoinableThread {
                        usleep(100_000)
                        do { try server.restart() } catch { restartError.value = error }
                    }
                }
                if value == Self.eventCount - 1_000 {
                    restarter?.join()
                    _ = waitUntil(timeout: 30) {
                        [publisherLog, subscriberLog].allSatisfy { log in
                            log.values.contains { if case .reconnected = $0 { true } else { false } }
                        }
                    }
                }
                event.send(value)
                if value % 500 == 0 { usleep(1_000) }
            }
        }
        sender.start()
        XCTAssertTrue(waitUntil(timeout: 90) { sender.isFinished })
        XCTAssertNil(restartError.value)
        for log in [publisherLog, subscriberLog] {
            XCTAssertTrue(log.values.contains(.disconnected))
            XCTAssertTrue(log.values.contains { if case .reconnected = $0 { true } else { false } })
        }
    }

    func testAtMostOnceReportsExactlyTheEventsThatAServerKillLost() throws {
        let server = try OwnedNATSServer(jetStream: false)
        let publisherLog = StatusLog()
        let subscriberLog = StatusLog()
        let (publisher, subscriber) = try makeBridgePair(
            stoppingAfterwards: server, publisherOptions: options(server), publisherStatus: publisherLog.event,
            subscriberOptions: options(server), subscriberStatus: subscriberLog.event)
        let local = Event<Int>()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let export = try publisher.export(local, to: "restart.at-most-once")
        let imported = try subscriber.import("restart.at-most-once", into: remote)

        try sendAcrossAKill(local, server: server, publisherLog: publisherLog, subscriberLog: subscriberLog)
        XCTAssertTrue(waitUntil(timeout: 30) { received.values.last == Self.eventCount })
        let values = received.values
        let gaps = subscriberLog.values.compactMap { status -> Int? in
            if case .gap(_, let publisher, let missed) = status, export.publishers.contains(publisher) {
                missed
            } else {
                nil
            }
        }
        XCTAssertEqual(values.count + gaps.reduce(0, +), Self.eventCount, "every event arrived or was reported")
        XCTAssertEqual(imported.missedCount, gaps.reduce(0, +))
        XCTAssertEqual(values, values.sorted(), "in order")
        XCTAssertEqual(Set(values).count, values.count, "no duplicates")
        print(
            "at-most-once across kill -9: \(values.count) arrived, \(gaps.reduce(0, +)) reported missing in \(gaps.count) gaps"
        )
    }

    func testAtLeastOnceLosesNothingAndDeliversNoDuplicatesAcrossAServerKill() throws {
        let server = try OwnedNATSServer(jetStream: true)
        let publisherLog = StatusLog()
        let subscriberLog = StatusLog()
        let (publisher, subscriber) = try makeBridgePair(
            stoppingAfterwards: server, publisherOptions: options(server), publisherStatus: publisherLog.event,
            subscriberOptions: options(server), subscriberStatus: subscriberLog.event)
        let stream = NATSStream(name: "RESTART", subjects: ["restart.>"])
        let local = Event<Int>()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try subscriber.import(
            "restart.at-least-once", into: remote,
            delivery: .atLeastOnce(stream: stream, durable: "observer", redeliveryWait: .seconds(1)))
        try publisher.export(local, to: "restart.at-least-once", delivery: .atLeastOnce(stream: stream))

        try sendAcrossAKill(local, server: server, publisherLog: publisherLog, subscriberLog: subscriberLog)
        XCTAssertTrue(waitUntil(timeout: 60) { received.count >= Self.eventCount })
        // Redeliveries of messages whose acknowledgment the kill lost come after the redelivery wait:
        // none may reach the observers within 2.5 s.
        XCTAssertFalse(
            received.wait(forCount: Self.eventCount + 1, timeout: 2.5),
            "a redelivered copy reached the observers: \(received.count) values for \(Self.eventCount) events")
        let values = received.values
        XCTAssertEqual(values.count, Self.eventCount, "delivered to observers")
        XCTAssertEqual(Set(values).count, Self.eventCount, "each event exactly once")
        XCTAssertEqual(Set(values), Set(1...Self.eventCount), "none lost")
        print(
            "at-least-once across kill -9: \(values.count) delivered once each, "
                + "\(imported.duplicateCount) redelivered copies dropped")
    }
}

/// A value guarded by a lock.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
