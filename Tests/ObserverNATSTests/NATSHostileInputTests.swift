import CNATS
import Foundation
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

@testable import ObserverNATS

/// What a careless or hostile peer can send, and what a careless caller can ask for: none of it
/// crashes the process, grows memory without bound, or breaks the connection for other imports.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSHostileInputTests: XCTestCase {
    /// A plain cnats connection that publishes hand-made frames.
    final class RawPublisher {
        let connection: OpaquePointer

        init() throws {
            var connection: OpaquePointer?
            let url = try NATSTestEnvironment.url()
            XCTAssertEqual(natsConnection_ConnectTo(&connection, url), NATS_OK)
            self.connection = try XCTUnwrap(connection)
        }

        deinit {
            natsConnection_Destroy(connection)
        }

        /// A frame of an `Int` value (tag 1) from `publisher` numbered `sequence`.
        func publish(_ subject: String, publisher: UInt64, sequence: UInt64, value: Int = 0, tag: UInt8 = 1) {
            var frame = [UInt8](repeating: 0, count: 26)
            frame[0] = 1
            frame[1] = tag
            withUnsafeBytes(of: publisher.littleEndian) { frame.replaceSubrange(2..<10, with: $0) }
            withUnsafeBytes(of: sequence.littleEndian) { frame.replaceSubrange(10..<18, with: $0) }
            withUnsafeBytes(of: value.littleEndian) { frame.replaceSubrange(18..<26, with: $0) }
            XCTAssertEqual(natsConnection_Publish(connection, subject, frame, Int32(frame.count)), NATS_OK)
        }

        func flush() {
            XCTAssertEqual(natsConnection_FlushTimeout(connection, 5000), NATS_OK)
        }
    }

    func testSequenceNumbersNoPublisherSendsAreCountedAsMalformedInBothModes() throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let raw = try RawPublisher()
        let subject = NATSTestEnvironment.uniqueSubject()
        let received = Received<Int>()
        let remote = Event<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try bridge.import(subject, into: remote)
        // 1 then UInt64.max (an Int conversion trapped), UInt64.max then 7 (`last + 1` overflowed), 0.
        let frames: [(UInt64, UInt64)] = [(9, 1), (9, .max), (9, 2), (10, .max), (10, 7), (11, 0), (9, 4)]
        for (index, (publisher, sequence)) in frames.enumerated() {
            raw.publish(subject, publisher: publisher, sequence: sequence, value: index)
        }
        raw.flush()
        XCTAssertTrue(waitUntil { imported.deliveredCount + imported.malformedCount == frames.count })
        XCTAssertEqual(received.values, [0, 2, 4, 6])
        XCTAssertEqual(imported.malformedCount, 3)
        XCTAssertEqual(imported.missedCount, 1)  // publisher 9's number 3

        // At-least-once: UInt64.max then 0 trapped building a range.
        let streamSubject = NATSTestEnvironment.uniqueSubject()
        let stream = NATSStream(name: "HOSTILE\(UInt32.random(in: 0 ... .max))", subjects: [streamSubject])
        let durable = Event<Int>()
        let durableReceived = Received<Int>()
        let durableToken = durable.subscribe { durableReceived.append($0) }
        defer { durableToken.cancel() }
        let durableImport = try bridge.import(
            streamSubject, into: durable, delivery: .atLeastOnce(stream: stream, durable: "hostile"))
        for (index, sequence) in [UInt64.max, 0, 1, 1, UInt64(Int64.max) + 1, 2].enumerated() {
            raw.publish(streamSubject, publisher: 5, sequence: sequence, value: index)
        }
        raw.flush()
        XCTAssertTrue(waitUntil { durableImport.deliveredCount + durableImport.malformedCount == 5 })
        XCTAssertEqual(durableReceived.values, [2, 5])
        XCTAssertEqual(durableImport.malformedCount, 3)
        XCTAssertTrue(waitUntil { durableImport.duplicateCount == 1 })
    }

    func testPublisherIdentitiesBeyondTheBoundAreForgottenAndCounted() throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let raw = try RawPublisher()
        let subject = NATSTestEnvironment.uniqueSubject()
        let remote = Event<Int>()
        let imported = try bridge.import(subject, into: remote)
        let capacity = PublisherLimits.standard.capacity
        // One frame from each of capacity + 500 identities (restarting publishers, or a hostile peer).
        for publisher in 1...UInt64(capacity + 500) {
            raw.publish(subject, publisher: publisher, sequence: 1)
            if publisher % 1_000 == 0 { raw.flush() }
        }
        raw.flush()
        XCTAssertTrue(waitUntil { imported.deliveredCount == capacity + 500 }, "\(imported.deliveredCount)")
        XCTAssertEqual(imported.forgottenPublisherCount, 500)
        XCTAssertEqual(imported.missedCount, 0)
        // Publisher 1 was forgotten: its number 5 starts afresh (no gap); the last one is remembered.
        raw.publish(subject, publisher: 1, sequence: 5)
        raw.publish(subject, publisher: UInt64(capacity + 500), sequence: 3)
        raw.flush()
        XCTAssertTrue(waitUntil { imported.deliveredCount == capacity + 502 })
        XCTAssertEqual(imported.missedCount, 1)
        XCTAssertEqual(imported.forgottenPublisherCount, 501)
    }

    func testOverlongSubjectsAndKeysAreRefusedAndTheConnectionKeepsWorking() throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let prefix = NATSTestEnvironment.uniqueSubject()
        // An import that must keep receiving after the refused calls.
        let canary = Event<Int>()
        let canaryRemote = Event<Int>()
        let canaryReceived = Received<Int>()
        let canaryToken = canaryRemote.subscribe { canaryReceived.append($0) }
        defer { canaryToken.cancel() }
        let other = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { other.close() }
        try other.import(prefix + ".canary", into: canaryRemote)
        try bridge.export(canary, to: prefix + ".canary")

        let keyed = KeyedEvent<String, Int>()
        let longKey = String(repeating: "k", count: 8_000)
        XCTAssertThrowsError(try bridge.export(keyed, keys: ["short", longKey], toPrefix: prefix)) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .invalidSubject)
            XCTAssertTrue("\(error)".contains("8"), "\(error)")
            XCTAssertTrue("\(error)".contains("\(NATSSubject.maximumSubjectBytes) bytes"), "\(error)")
        }
        // The longest subject allowed works end to end, at most once and at least once.
        let longest =
            prefix + "." + String(repeating: "s", count: NATSSubject.maximumSubjectBytes - prefix.utf8.count - 1)
        XCTAssertEqual(longest.utf8.count, NATSSubject.maximumSubjectBytes)
        let local = Event<Int>()
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        try other.import(longest, into: remote)
        try bridge.export(local, to: longest)
        let stream = NATSStream(name: "LONG\(UInt32.random(in: 0 ... .max))", subjects: [longest + "-js"])
        XCTAssertThrowsError(try bridge.export(local, to: longest + "-js", delivery: .atLeastOnce(stream: stream)))
        let jetStreamSubject = String(longest.dropLast(3)) + "-js"
        let durableStream = NATSStream(name: "LONG\(UInt32.random(in: 0 ... .max))", subjects: [jetStreamSubject])
        let durableRemote = Event<Int>()
        let durableReceived = Received<Int>()
        let durableToken = durableRemote.subscribe { durableReceived.append($0) }
        defer { durableToken.cancel() }
        try other.import(
            jetStreamSubject, into: durableRemote, delivery: .atLeastOnce(stream: durableStream, durable: "long"))
        try bridge.export(local, to: jetStreamSubject, delivery: .atLeastOnce(stream: durableStream))
        local.send(1)
        XCTAssertTrue(waitUntil { received.values == [1] && durableReceived.values == [1] })

        // One byte more is refused, for exports, imports and keyed patterns.
        let tooLong = longest + "x"
        for attempt in [
            { try bridge.export(local, to: tooLong) },
            { try bridge.import(tooLong, into: remote) },
            { try bridge.import(prefix: prefix, matching: String(repeating: "p", count: 3_900), into: keyed) },
            { try bridge.export(keyed, keys: ["k"], toPrefix: tooLong) },
        ] as [() throws -> Any] {
            XCTAssertThrowsError(try attempt()) { error in
                XCTAssertEqual((error as? NATSError)?.kind, .invalidSubject, "\(error)")
            }
        }
        // Stream, consumer, bucket and key names go into subjects too: a 5 000-byte one closed the
        // connection for good.
        let longName = String(repeating: "N", count: 5_000)
        XCTAssertThrowsError(
            try bridge.export(
                local, to: prefix + ".n",
                delivery: .atLeastOnce(stream: NATSStream(name: longName, subjects: [prefix + ".n"])))
        ) { XCTAssertEqual(($0 as? NATSError)?.kind, .invalidOption, "\($0)") }
        XCTAssertThrowsError(
            try bridge.import(
                prefix + ".n", into: remote, delivery: .atLeastOnce(stream: durableStream, durable: longName))
        ) { XCTAssertEqual(($0 as? NATSError)?.kind, .invalidOption, "\($0)") }
        XCTAssertThrowsError(try bridge.mirror(ObservableValue(0), bucket: longName, key: "k")) {
            XCTAssertEqual(($0 as? NATSError)?.kind, .invalidSubject, "\($0)")
        }
        XCTAssertThrowsError(
            try bridge.mirror(ObservableValue(0), bucket: "b", key: String(repeating: "k", count: 3_838))
        ) {
            XCTAssertEqual(($0 as? NATSError)?.kind, .invalidSubject, "\($0)")
        }
        XCTAssertFalse(NATSSubject.isValidPublishSubject(tooLong))
        XCTAssertTrue(NATSSubject.isValidPublishSubject(longest))
        canary.send(7)
        XCTAssertTrue(waitUntil { canaryReceived.values == [7] })
    }

    func testStringKeysDecodeOnlyFromTheirOwnToken() {
        // Found by the fuzz target: the empty token decoded as the empty key, whose token is `%`.
        for token in ["", " ", "a*b", "a>", "%2e", "%41", "%2", "%ZZ", "a%"] {
            XCTAssertNil(String(natsSubjectTokens: [Substring(token)]), token)
        }
        for key in ["", "a.b", "%", " ", "ü", "*", "a%2Eb"] {
            XCTAssertEqual(String(natsSubjectTokens: key.natsSubjectTokens), key)
        }
    }

    func testIntegerKeysAreAcceptedOnlyInTheirCanonicalForm() throws {
        for token in ["05", "+5", "0005", "-0", "5 ", "٥", "0x5", ""] {
            XCTAssertNil(Int(natsSubjectTokens: [Substring(token)]), token)
        }
        for key in [5, 0, -1, Int.max, Int.min] {
            XCTAssertEqual(Int(natsSubjectTokens: key.natsSubjectTokens), key)
        }
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let raw = try RawPublisher()
        let prefix = NATSTestEnvironment.uniqueSubject()
        let remote = KeyedEvent<Int, Int>()
        let received = Received<Int>()
        let token = remote.subscribe(key: 5) { received.append($0) }
        defer { token.cancel() }
        let imported = try bridge.import(prefix: prefix, into: remote)
        for (index, tail) in ["05", "+5", "0005", "5"].enumerated() {
            raw.publish(prefix + "." + tail, publisher: UInt64(index + 1), sequence: 1, value: index)
        }
        raw.flush()
        XCTAssertTrue(waitUntil { imported.deliveredCount + imported.malformedCount == 4 })
        XCTAssertEqual(received.values, [3])
        XCTAssertEqual(imported.malformedCount, 3)
    }

    func testAPatternThatCanMatchNoKeyIsAnErrorAndAKeysPatternSelectsIt() async throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let prefix = NATSTestEnvironment.uniqueSubject()
        let prices = KeyedEvent<String, Double>()
        try bridge.export(prices, keys: ["a.b", "a", "b"], toPrefix: prefix)
        let remote = KeyedEvent<String, Double>()
        // "a.b" is two tokens; a String key is one: it would silently match nothing.
        XCTAssertThrowsError(try bridge.import(prefix: prefix, matching: "a.b", into: remote)) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .invalidSubject)
            XCTAssertTrue("\(error)".contains("NATSSubject.pattern(forKey:)"), "\(error)")
        }
        XCTAssertThrowsError(try bridge.import(prefix: prefix, matching: "*.*", into: remote))
        XCTAssertThrowsError(try bridge.import(prefix: prefix, matching: "a%zz", into: remote))
        XCTAssertThrowsError(try bridge.import(prefix: prefix, matching: "05", into: KeyedEvent<Int, Double>()))
        XCTAssertEqual(NATSSubject.pattern(forKey: "a.b"), "a%2Eb")
        XCTAssertEqual(NATSSubject.pattern(forKey: 42), "42")
        let other = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { other.close() }
        let received = remote.forKeys(["a.b", "a", "b"]).record()
        try other.import(prefix: prefix, matching: try XCTUnwrap(NATSSubject.pattern(forKey: "a.b")), into: remote)
        for key in ["a", "a.b", "b"] { prices.send(1, forKey: key) }
        let first = try await received.next(timeout: .seconds(10))
        XCTAssertEqual(first.key, "a.b")
        try await received.expectNoMoreValues(within: .milliseconds(100))
    }

    func testCancelledImportsReleaseTheirMemory() throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let subject = NATSTestEnvironment.uniqueSubject()
        let event = Event<Int>()
        func cycle() throws {
            let imported = try bridge.import(subject, into: event)
            imported.cancel()
        }
        for _ in 0..<200 { try cycle() }
        let before = AllocatedBytes.now()
        let cycles = 2_000
        for _ in 0..<cycles { try cycle() }
        let growth = AllocatedBytes.now() - before
        // Each cycle kept ~8-9 KiB (17 MiB for 2 000) while cancelled subscriptions waited for close().
        XCTAssertEqual(bridge.state.withLock { $0.retiredSubscriptions.count }, 0)
        XCTAssertEqual(bridge.callbacks.importSubjects.withLock { $0.count }, 0)
        XCTAssertLessThan(growth, 4 << 20, "\(cycles) import + cancel cycles grew the heap by \(growth) bytes")
        // The bridge still imports.
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        try bridge.import(subject, into: remote)
        let other = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { other.close() }
        let local = Event<Int>()
        try other.export(local, to: subject)
        local.send(3)
        XCTAssertTrue(waitUntil { received.values == [3] })
    }

    func testCloseReportsClosedWithoutADisconnectionBeforeIt() throws {
        for _ in 0..<3 {
            let log = StatusLog()
            let bridge = try NATSBridge(options: try NATSTestEnvironment.options(), status: log.event)
            try bridge.import(NATSTestEnvironment.uniqueSubject(), into: Event<Int>())
            bridge.close()
            XCTAssertTrue(log.statuses.wait(timeout: 10) { $0.contains(.closed) }, "no .closed: \(log.values)")
            // Nor later: no .disconnected arrives within 50 ms after .closed.
            XCTAssertFalse(
                log.statuses.wait(timeout: 0.05) { $0.contains(.disconnected) }, "a .disconnected: \(log.values)")
            XCTAssertEqual(log.count { $0 == .closed }, 1, "\(log.values)")
        }
    }
}

/// Bytes the process holds: the sanitizer allocator's count of live heap bytes under a
/// sanitizer, else the resident set (`/proc/self/statm`; glibc's `mallinfo2` is not imported by
/// Swift's Glibc module). Freed heap memory stays resident, so growth of either counts leaks.
enum AllocatedBytes {
    static func now() -> Int {
        typealias Counter = @convention(c) () -> Int
        #if os(Linux)
            let everywhere: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT
        #else
            let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #endif
        if let symbol = dlsym(everywhere, "__sanitizer_get_current_allocated_bytes") {
            return unsafeBitCast(symbol, to: Counter.self)()
        }
        let descriptor = open("/proc/self/statm", O_RDONLY)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        let fields = String(decoding: bytes[0..<count], as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
