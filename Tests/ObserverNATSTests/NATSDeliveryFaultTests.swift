import CNATS
import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// Bad payloads, slow handlers, and closing while messages are in flight.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSDeliveryFaultTests: XCTestCase {
    /// Publishes raw bytes with cnats itself, bypassing the bridge's framing.
    func publishRaw(_ payloads: [[UInt8]], to subject: String, url: String) throws {
        var connection: OpaquePointer?
        XCTAssertEqual(natsConnection_ConnectTo(&connection, url), NATS_OK)
        defer { natsConnection_Destroy(connection) }
        for payload in payloads {
            XCTAssertEqual(natsConnection_Publish(connection, subject, payload, Int32(payload.count)), NATS_OK)
        }
        XCTAssertEqual(natsConnection_FlushTimeout(connection, 2000), NATS_OK)
        natsConnection_Close(connection)
    }

    func testMalformedPayloadsAreCountedAndReportedAndOthersStillDelivered() throws {
        let log = StatusLog()
        let (publisher, subscriber) = try makeBridgePair(subscriberStatus: log.event)
        let subject = NATSTestEnvironment.uniqueSubject()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try subscriber.import(subject, into: remote)
        let local = Event<Int>()
        try publisher.export(local, to: subject)

        local.send(1)
        XCTAssertTrue(waitUntil { received.count == 1 })
        var header: [UInt8] = [1, Int.natsWireTag] + [UInt8](repeating: 7, count: 16)
        let garbage: [[UInt8]] = [
            [],  // empty
            [1, 2, 3],  // shorter than a header
            [2, Int.natsWireTag] + [UInt8](repeating: 0, count: 24),  // another format version
            [1, String.natsWireTag] + [UInt8](repeating: 0, count: 24),  // another type
            header + [1, 2, 3, 4, 5, 6, 7],  // an Int of 7 bytes
        ]
        try publishRaw(garbage, to: subject, url: try NATSTestEnvironment.url())
        header = []
        let wrongType = Event<String>()
        try publisher.export(wrongType, to: subject)
        wrongType.send("not an Int")
        local.send(2)
        XCTAssertTrue(waitUntil { received.count == 2 && imported.malformedCount == 6 })
        XCTAssertEqual(received.values, [1, 2])
        XCTAssertEqual(imported.malformedCount, 6)
        XCTAssertTrue(waitUntil { imported.deliveredCount == 2 })
        XCTAssertTrue(waitUntil { log.count { if case .malformed = $0 { true } else { false } } == 6 })
        let reported = log.values.compactMap { status -> Int? in
            if case .malformed(subject, let count) = status { count } else { nil }
        }
        XCTAssertEqual(reported, [1, 2, 3, 4, 5, 6])
    }

    func testValuesTheCodecCannotEncodeAreCountedAsFailedPublishesAndOthersStillPublished() throws {
        struct Odd: Error {}
        // Odd numbers do not encode; even ones travel as their decimal text.
        let evenOnly = NATSCodec<Int>(
            tag: 100,
            encode: { value in
                guard value % 2 == 0 else { throw Odd() }
                return Data(String(value).utf8)
            },
            decode: { data in
                guard let value = Int(String(decoding: data, as: UTF8.self)) else { throw Odd() }
                return value
            })
        let log = StatusLog()
        let (publisher, subscriber) = try makeBridgePair(publisherStatus: log.event)
        let subject = NATSTestEnvironment.uniqueSubject()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try subscriber.import(subject, into: remote, codec: evenOnly)
        let local = Event<Int>()
        let export = try publisher.export(local, to: subject, codec: evenOnly)

        for value in 0..<10 { local.send(value) }
        XCTAssertTrue(waitUntil { received.count == 5 })
        XCTAssertEqual(received.values, [0, 2, 4, 6, 8])
        XCTAssertEqual(export.failedPublishes, 5)
        let failures = log.values.filter { status in
            if case .publishFailed(subject, "the codec could not encode the value") = status { true } else { false }
        }
        XCTAssertEqual(failures.count, 5)
        // The failures took no sequence numbers: the receiver saw no gap.
        XCTAssertEqual(imported.missedCount, 0)
        XCTAssertEqual(imported.malformedCount, 0)
    }

    func testSlowHandlerGetsSlowConsumerStatusWithDroppedCountAndSendsNeverBlock() throws {
        let log = StatusLog()
        var options = try NATSTestEnvironment.options()
        options.pendingLimits = .init(messages: 100, bytes: 1 << 20)
        let (publisher, subscriber) = try makeBridgePair(subscriberOptions: options, subscriberStatus: log.event)
        let subject = NATSTestEnvironment.uniqueSubject()
        let remote = Event<Int>()
        let release = DispatchSemaphore(value: 0)
        let first = DispatchSemaphore(value: 0)
        let received = Received<Int>()
        let token = remote.subscribe { value in
            received.append(value)
            if value == 1 {
                first.signal()
                release.wait()  // the handler is stuck until every send has returned
            }
        }
        defer { token.cancel() }
        let imported = try subscriber.import(subject, into: remote)
        let local = Event<Int>()
        try publisher.export(local, to: subject)
        local.send(1)
        XCTAssertEqual(first.wait(timeout: .now() + 10), .success)
        let count = 10_000
        for value in 2...count { local.send(value) }  // returns although the remote handler is blocked
        XCTAssertTrue(waitUntil { log.count { if case .slowConsumer = $0 { true } else { false } } >= 1 })
        release.signal()
        // A gap is seen when a later value arrives: send more until one does (the
        // queue may still be full for a moment after the handler is released).
        var next = count
        XCTAssertTrue(
            waitUntil {
                if (received.values.last ?? 0) > count { return true }
                next += 1
                local.send(next)
                return false
            })
        let marker = received.values.last ?? 0
        let dropped = log.values.compactMap { status -> Int? in
            if case .slowConsumer(subject, let dropped) = status { dropped } else { nil }
        }
        XCTAssertFalse(dropped.isEmpty, "\(log.values.prefix(5))")
        XCTAssertGreaterThan(dropped.first ?? 0, 0)
        // Every value either arrived or was reported missing, exactly.
        XCTAssertEqual(received.count + imported.missedCount, marker)
        XCTAssertTrue(waitUntil { imported.deliveredCount == received.count })
        XCTAssertGreaterThan(imported.missedCount, 0)
        XCTAssertEqual(Set(received.values).count, received.count)
        XCTAssertEqual(received.values, received.values.sorted())
    }

    func testNoHandlerRunsAfterCloseReturnsWhileMessagesAreInFlight() throws {
        let publisher = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { publisher.close() }
        for round in 0..<5 {
            let subject = NATSTestEnvironment.uniqueSubject("close\(round)")
            let subscriber = try NATSBridge(options: try NATSTestEnvironment.options())
            let remote = Event<Int>()
            let closed = HeapAtomicWord<Bool>(false)
            let lateCalls = HeapAtomicWord<Int>(0)
            let lateCall = DispatchSemaphore(value: 0)
            let calls = HeapAtomicWord<Int>(0)
            let token = remote.subscribe { _ in
                if closed.load(ordering: .acquiring) {
                    lateCalls.wrappingAdd(1, ordering: .relaxed)
                    lateCall.signal()
                }
                calls.wrappingAdd(1, ordering: .relaxed)
                usleep(50)
            }
            try subscriber.import(subject, into: remote)
            let local = Event<Int>()
            let export = try publisher.export(local, to: subject)
            let sending = HeapAtomicWord<Bool>(true)
            let sender = JoinableThread {
                var value = 0
                while sending.load(ordering: .relaxed) {
                    value += 1
                    local.send(value)
                    if value % 64 == 0 { usleep(100) }
                }
            }
            XCTAssertTrue(waitUntil { calls.load(ordering: .relaxed) > 200 })
            subscriber.close()
            closed.store(true, ordering: .releasing)
            let atClose = calls.load(ordering: .relaxed)
            // Messages keep arriving at the server for 100 ms: no handler may run for any of them.
            XCTAssertEqual(
                lateCall.wait(timeout: .now() + 0.1), .timedOut, "round \(round): a handler ran after close() returned")
            sending.store(false, ordering: .relaxed)
            XCTAssertEqual(lateCalls.load(ordering: .relaxed), 0, "round \(round)")
            XCTAssertEqual(calls.load(ordering: .relaxed), atClose, "round \(round)")
            export.cancel()
            token.cancel()
            sender.join()
        }
    }

    func testCancellingAnImportFromItsOwnHandlerDoesNotDeadlock() throws {
        let (publisher, subscriber) = try makeBridgePair()
        let subject = NATSTestEnvironment.uniqueSubject()
        let remote = Event<Int>()
        let holder = LockedImport()
        let received = Received<Int>()
        let token = remote.subscribe { value in
            received.append(value)
            holder.value?.cancel()
        }
        defer { token.cancel() }
        holder.value = try subscriber.import(subject, into: remote)
        let local = Event<Int>()
        try publisher.export(local, to: subject)
        for value in 1...100 { local.send(value) }
        XCTAssertTrue(received.wait(forCount: 1, timeout: 10), "the import's handler did not run")
        // The import stopped at its first value: the other 99 never reach the handler.
        XCTAssertFalse(
            received.wait(forCount: 100, timeout: 0.1), "the import delivered all 100 values after its own cancel")
        XCTAssertEqual(received.values.first, 1)
        XCTAssertLessThan(received.count, 100)
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class LockedImport: @unchecked Sendable {
    // @unchecked: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: NATSImport?
    var value: NATSImport? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
