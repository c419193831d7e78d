import CNATS
import Foundation
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

@testable import ObserverNATS

/// `NATSOptions.batching`: several events per message, bounded in count, bytes and time, with
/// per-event order, gap reports and de-duplication on the import side.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSBatchingTests: XCTestCase {
    static let interval: Duration = .milliseconds(50)

    func batchingOptions(
        _ url: String? = nil, max: Int = 64, linger: Duration = interval
    ) throws -> NATSOptions {
        var options = try NATSTestEnvironment.options()
        if let url { options.servers = [url] }
        options.batching = .events(max: max, linger: linger)
        return options
    }

    /// A plain cnats connection: publishes hand-made frames and counts the messages on a subject.
    final class RawConnection {
        let connection: OpaquePointer

        init(url: String? = nil) throws {
            var connection: OpaquePointer?
            XCTAssertEqual(natsConnection_ConnectTo(&connection, try url ?? NATSTestEnvironment.url()), NATS_OK)
            self.connection = try XCTUnwrap(connection)
        }

        deinit {
            natsConnection_Destroy(connection)
        }

        /// A single frame (format 1) of an `Int` (tag 1).
        func publishSingle(_ subject: String, publisher: UInt64, sequence: UInt64, value: Int) {
            var frame: [UInt8] = [1, 1]
            frame += Self.bytes(publisher) + Self.bytes(sequence) + Self.bytes(UInt64(bitPattern: Int64(value)))
            publish(subject, frame)
        }

        /// A batch frame (format 2, as documented in `NATSCodec`) of `Int` values.
        func publishBatch(_ subject: String, publisher: UInt64, first: UInt64, values: [Int]) {
            publish(subject, Self.batchFrame(publisher: publisher, first: first, values: values))
        }

        static func batchFrame(
            publisher: UInt64, first: UInt64, values: [Int], tag: UInt8 = 1, count: UInt32? = nil
        ) -> [UInt8] {
            var frame: [UInt8] = [2, tag] + bytes(publisher) + bytes(first)
            frame += withUnsafeBytes(of: (count ?? UInt32(values.count)).littleEndian, Array.init)
            for value in values {
                frame += withUnsafeBytes(of: UInt32(8).littleEndian, Array.init)
                frame += bytes(UInt64(bitPattern: Int64(value)))
            }
            return frame
        }

        static func bytes(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }

        func publish(_ subject: String, _ frame: [UInt8]) {
            XCTAssertEqual(natsConnection_Publish(connection, subject, frame, Int32(frame.count)), NATS_OK)
        }

        func flush() {
            XCTAssertEqual(natsConnection_FlushTimeout(connection, 5000), NATS_OK)
        }

        /// A synchronous subscription whose pending count is the number of messages published.
        func subscribe(_ subject: String) -> OpaquePointer? {
            var subscription: OpaquePointer?
            XCTAssertEqual(natsConnection_SubscribeSync(&subscription, connection, subject), NATS_OK)
            XCTAssertEqual(natsSubscription_SetPendingLimits(subscription, -1, -1), NATS_OK)
            flush()
            return subscription
        }

        static func pendingMessages(_ subscription: OpaquePointer?) -> Int {
            var messages: Int32 = 0
            XCTAssertEqual(natsSubscription_GetPending(subscription, &messages, nil), NATS_OK)
            return Int(messages)
        }
    }

    /// Equal arrays, or a failure naming the first difference (not thousands of values).
    func assertSame(_ actual: [Int], _ expected: [Int], _ what: String, line: UInt = #line) {
        guard actual != expected else { return }
        let index =
            zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(actual.count, expected.count)
        let found = index < actual.count ? String(actual[index]) : "nothing"
        let wanted = index < expected.count ? String(expected[index]) : "nothing"
        XCTFail(
            "\(what): \(actual.count) values for \(expected.count); at \(index) \(found) for \(wanted)", line: line)
    }

    // MARK: Delivery

    func testBatchedAtMostOnceDeliversEveryEventOnceInOrderPerPublisherInFewMessages() async throws {
        let (publishing, importing) = try makeBridgePair(publisherOptions: try batchingOptions(max: 64))
        let subject = NATSTestEnvironment.uniqueSubject()
        let raw = try RawConnection()
        let counter = raw.subscribe(subject)
        defer { natsSubscription_Destroy(counter) }
        let remote = Event<Int>()
        let received = remote.record()
        let imported = try importing.import(subject, into: remote)
        let first = Event<Int>()
        let second = Event<Int>()
        try publishing.export(first, to: subject)
        try publishing.export(second, to: subject)
        let perPublisher = 10_000
        let events = [first, second]
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            for value in 0..<perPublisher { events[index].send(index * 1_000_000 + value) }
        }
        XCTAssertEqual(publishing.flush(timeout: .seconds(5)), 0)
        let values = try await received.values(count: 2 * perPublisher, timeout: .seconds(10))
        try await received.expectNoMoreValues(within: .milliseconds(100))
        XCTAssertEqual(values.count, 2 * perPublisher, "every event once")
        assertSame(values.filter { $0 < 1_000_000 }, Array(0..<perPublisher), "publisher 1 in order")
        assertSame(
            values.filter { $0 >= 1_000_000 }, Array(1_000_000..<(1_000_000 + perPublisher)), "publisher 2 in order")
        XCTAssertEqual(imported.missedCount, 0)
        XCTAssertEqual(imported.malformedCount, 0)
        let messages = RawConnection.pendingMessages(counter)
        XCTAssertGreaterThanOrEqual(messages, 2 * perPublisher / 64, "at most 64 events a message")
        XCTAssertLessThan(messages, 2 * perPublisher / 8, "events share messages")
    }

    func testBatchedAtLeastOnceDeliversEveryEventOnceInOrderWithOneMessagePerBatch() async throws {
        let server = try OwnedNATSServer()
        let (publishing, importing) = try makeBridgePair(
            stoppingAfterwards: server,
            publisherOptions: try batchingOptions(server.url, max: 100, linger: .seconds(10)),
            subscriberOptions: NATSOptions(servers: [server.url]))
        let stream = NATSStream(name: "BATCHED", subjects: ["batched.>"])
        let remote = Event<Int>()
        let received = remote.record()
        let imported = try importing.import(
            "batched.values", into: remote, delivery: .atLeastOnce(stream: stream, durable: "batched"))
        let local = Event<Int>()
        let export = try publishing.export(local, to: "batched.values", delivery: .atLeastOnce(stream: stream))
        for value in 0..<5_000 { local.send(value) }
        XCTAssertEqual(publishing.flush(timeout: .seconds(20)), 0, "every batch acknowledged")
        _ = try await received.values(count: 5_000, timeout: .seconds(20))
        try await received.expectNoMoreValues(within: .milliseconds(100))
        assertSame(received.values, Array(0..<5_000), "every event once, in order")
        XCTAssertEqual(imported.duplicateCount, 0)
        XCTAssertEqual(export.failedPublishes, 0)
        let admin = try JetStreamAdmin(url: server.url)
        let state = admin.request("STREAM.INFO.BATCHED")?["state"] as? [String: Any]
        XCTAssertEqual(state?["messages"] as? Int, 50, "one stored (and acknowledged) message per 100 events")
    }

    func testCloseGivesUpExactlyTheEventsOfUnacknowledgedBatches() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(
            options: try batchingOptions(server.url, max: 32, linger: .seconds(10)), status: log.event)
        let stream = NATSStream(name: "BATCHFLUSH", subjects: ["batchflush.>"])
        let local = Event<Int>()
        let export = try bridge.export(local, to: "batchflush.values", delivery: .atLeastOnce(stream: stream))
        for value in 1...500 { local.send(value) }
        XCTAssertEqual(bridge.flush(timeout: .seconds(20)), 0, "the lingering batch is sent by flush")

        server.kill9()
        XCTAssertTrue(waitUntil { log.values.contains(.disconnected) })
        for value in 501...600 { local.send(value) }
        XCTAssertEqual(bridge.flush(timeout: .milliseconds(300)), 4, "32 + 32 + 32 + 4 events in 4 messages")
        XCTAssertEqual(bridge.close(timeout: .milliseconds(300)), 100, "close counts events, not messages")
        XCTAssertEqual(unconfirmedCount(log), 100)
        XCTAssertEqual(export.unconfirmedPublishes, 100)
        XCTAssertEqual(export.failedPublishes, 100)
    }

    // MARK: Gaps and duplicates per event

    func testGapsAreReportedPerEventInsideAndAcrossBatchesAndMixedFramesDeliverInOrder() throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let raw = try RawConnection()
        let subject = NATSTestEnvironment.uniqueSubject()
        let received = Received<Int>()
        let remote = Event<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try bridge.import(subject, into: remote)
        raw.publishSingle(subject, publisher: 7, sequence: 1, value: 1)
        raw.publishBatch(subject, publisher: 7, first: 2, values: [2, 3, 4])  // mixed: no gap
        raw.publishBatch(subject, publisher: 7, first: 7, values: [7, 8])  // 5, 6 missed
        raw.publishSingle(subject, publisher: 7, sequence: 9, value: 9)
        raw.publishBatch(subject, publisher: 7, first: 12, values: [12])  // 10, 11 missed
        raw.publishBatch(subject, publisher: 8, first: 1, values: [100, 101])  // another publisher
        raw.flush()
        XCTAssertTrue(waitUntil { imported.deliveredCount == 10 })
        XCTAssertEqual(received.values, [1, 2, 3, 4, 7, 8, 9, 12, 100, 101])
        XCTAssertEqual(imported.missedCount, 4)
        XCTAssertEqual(imported.malformedCount, 0)
    }

    func testAtLeastOnceDropsEachRedeliveredEventOfOverlappingBatches() throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let raw = try RawConnection()
        let subject = NATSTestEnvironment.uniqueSubject()
        let stream = NATSStream(name: "OVERLAP\(UInt32.random(in: 0 ... .max))", subjects: [subject])
        let received = Received<Int>()
        let remote = Event<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try bridge.import(subject, into: remote, delivery: .atLeastOnce(stream: stream, durable: "o"))
        raw.publishBatch(subject, publisher: 3, first: 1, values: [1, 2, 3])
        raw.publishBatch(subject, publisher: 3, first: 2, values: [2, 3, 4, 5])  // 2 and 3 again
        raw.publishSingle(subject, publisher: 3, sequence: 5, value: 5)  // again
        raw.publishSingle(subject, publisher: 3, sequence: 7, value: 7)
        raw.publishBatch(subject, publisher: 3, first: 6, values: [6, 7, 8])  // 7 again
        raw.flush()
        XCTAssertTrue(waitUntil { imported.deliveredCount + imported.duplicateCount == 12 })
        XCTAssertEqual(received.values, [1, 2, 3, 4, 5, 7, 6, 8])
        XCTAssertEqual(imported.duplicateCount, 4)
        XCTAssertEqual(imported.malformedCount, 0)
    }

    func testMalformedBatchFramesAreCountedAndGoodOnesStillDeliver() throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let raw = try RawConnection()
        let subject = NATSTestEnvironment.uniqueSubject()
        let received = Received<Int>()
        let remote = Event<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try bridge.import(subject, into: remote)
        let good = RawConnection.batchFrame(publisher: 4, first: 1, values: [10, 11])
        var lengthPastEnd = good
        lengthPastEnd[22] = 200
        var wrongValueLength = RawConnection.batchFrame(publisher: 4, first: 3, values: [12, 13])
        wrongValueLength[22] = 4  // the first value "is" 4 bytes: the lengths no longer fill the frame
        let frames: [[UInt8]] = [
            RawConnection.batchFrame(publisher: 4, first: 1, values: [], count: 0),  // no event
            RawConnection.batchFrame(publisher: 4, first: 1, values: [1], count: 2),  // count past the end
            RawConnection.batchFrame(publisher: 4, first: 1, values: [1, 2], count: 1),  // bytes left over
            lengthPastEnd,
            wrongValueLength,
            RawConnection.batchFrame(publisher: 4, first: 0, values: [1]),  // number 0
            RawConnection.batchFrame(publisher: 4, first: UInt64(Int64.max), values: [1, 2]),  // past 2^63 − 1
            RawConnection.batchFrame(publisher: 4, first: 1, values: [1], tag: 9),  // another type
            Array(good.prefix(21)),  // shorter than the header
            [2, 1] + RawConnection.bytes(4) + RawConnection.bytes(1)
                + withUnsafeBytes(of: UInt32.max.littleEndian, Array.init),  // 2^32 − 1 events claimed, none there
        ]
        for frame in frames { raw.publish(subject, frame) }
        raw.publish(subject, good)
        // A well-formed batch whose second value does not decode as an Int (3 bytes).
        var undecodable: [UInt8] = [2, 1] + RawConnection.bytes(4) + RawConnection.bytes(3)
        undecodable += withUnsafeBytes(of: UInt32(2).littleEndian, Array.init)
        undecodable += withUnsafeBytes(of: UInt32(8).littleEndian, Array.init) + RawConnection.bytes(12)
        undecodable += withUnsafeBytes(of: UInt32(3).littleEndian, Array.init) + [1, 2, 3]
        raw.publish(subject, undecodable)
        raw.flush()
        XCTAssertTrue(waitUntil { imported.deliveredCount + imported.malformedCount == 3 + frames.count + 1 })
        XCTAssertEqual(received.values, [10, 11, 12])
        XCTAssertEqual(imported.malformedCount, frames.count + 1)
        XCTAssertEqual(imported.missedCount, 0)
    }

    // MARK: Linger, flush, close

    func testAnEventSentAloneArrivesWithinTheLingerAndNotAtOnce() throws {
        let linger: Duration = .milliseconds(200)
        let (publishing, importing) = try makeBridgePair(
            publisherOptions: try batchingOptions(max: 1000, linger: linger))
        let subject = NATSTestEnvironment.uniqueSubject()
        let arrivals = Received<Date>()
        let remote = Event<Int>()
        let token = remote.subscribe { _ in arrivals.append(Date()) }
        defer { token.cancel() }
        try importing.import(subject, into: remote)
        let local = Event<Int>()
        try publishing.export(local, to: subject)
        for _ in 0..<3 {
            let sent = Date()
            let before = arrivals.count
            local.send(1)
            guard waitUntil(timeout: 5, { arrivals.count > before }) else {
                return XCTFail("the linger thread did not send the event")
            }
            let latency = arrivals.values[before].timeIntervalSince(sent)
            XCTAssertGreaterThanOrEqual(latency, 0.15, "the event lingered (about 200 ms)")
            XCTAssertLessThan(latency, 0.2 + 1.0, "within the linger and a generous slack")
        }
    }

    func testCloseCancelAndFlushSendWhatLingers() throws {
        let importing = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { importing.close() }
        let subject = NATSTestEnvironment.uniqueSubject()
        let received = Received<Int>()
        let remote = Event<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        try importing.import(subject, into: remote)
        let local = Event<Int>()

        let closing = try NATSBridge(options: try batchingOptions(max: 1000, linger: .seconds(10)))
        try closing.export(local, to: subject)
        for value in 1...3 { local.send(value) }
        closing.close()
        XCTAssertTrue(waitUntil(timeout: 3) { received.count == 3 }, "close sent the lingering batch")

        let cancelling = try NATSBridge(options: try batchingOptions(max: 1000, linger: .seconds(10)))
        defer { cancelling.close() }
        let export = try cancelling.export(local, to: subject)
        for value in 4...5 { local.send(value) }
        export.cancel()
        XCTAssertEqual(cancelling.flush(timeout: .seconds(5)), 0)
        XCTAssertTrue(waitUntil(timeout: 3) { received.count == 5 }, "cancel sent the lingering batch")

        try cancelling.export(local, to: subject)
        local.send(6)
        XCTAssertEqual(cancelling.flush(timeout: .seconds(5)), 0)
        XCTAssertTrue(waitUntil(timeout: 3) { received.count == 6 }, "flush sent the lingering batch")
        XCTAssertEqual(received.values, [1, 2, 3, 4, 5, 6])
    }

    func testBatchingOptionsOutOfRangeAreRefused() throws {
        for batching in [
            NATSOptions.Batching.events(max: 1, linger: .milliseconds(1)), .events(max: 65_537, linger: .seconds(1)),
            .events(max: 10, linger: .zero), .events(max: 10, linger: .seconds(11)),
        ] {
            var options = try NATSTestEnvironment.options()
            options.batching = batching
            XCTAssertThrowsError(try NATSBridge(options: options), "\(batching)") { error in
                XCTAssertEqual((error as? NATSError)?.kind, .invalidOption)
            }
        }
    }
}
