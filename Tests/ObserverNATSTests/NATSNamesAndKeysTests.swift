import Foundation
import ObserverNATS
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

/// Names and keys that go into subjects: names checked against the server's rules before anything
/// is sent, one subject per key under `==`, subjects split and compared as bytes.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSNamesAndKeysTests: XCTestCase {
    func options(_ server: OwnedNATSServer, _ configure: (inout NATSOptions) -> Void = { _ in }) -> NATSOptions {
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        configure(&options)
        return options
    }

    // MARK: Names

    /// Stream and durable names that break a rule of nats-server's, each with a word of the rule the
    /// error must name.
    static let badAssetNames: [(name: String, rule: String)] = [
        ("K4 N", "whitespace"), ("K4\tN", "whitespace"), ("K4\nN", "whitespace"), ("K4\u{A0}N", "whitespace"),
        ("", "empty"), ("K4.N", "'.'"), ("K4*", "wildcard"), ("K4>", "wildcard"), ("K4/N", "path separator"),
        ("K4\\N", "path separator"), ("K4\u{7}N", "control character"), (String(repeating: "n", count: 256), "255"),
    ]

    func testStreamAndConsumerNamesAreCheckedBeforeUseAndTheConnectionStaysUp() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(options: options(server), status: log.event)
        let publisher = try NATSBridge(options: options(server))
        defer {
            bridge.close()
            publisher.close()
        }
        // An unrelated import of the same bridge, fed by another connection.
        let received = Received<Int>()
        let remote = Event<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        try bridge.import("names.unrelated", into: remote)
        let local = Event<Int>()
        try publisher.export(local, to: "names.unrelated")

        var sent = 0
        for (name, rule) in Self.badAssetNames {
            let stream = NATSStream(name: name, subjects: ["names.stored.>"])
            XCTAssertThrowsError(
                try bridge.import(
                    "names.stored.a", into: Event<Int>(), delivery: .atLeastOnce(stream: stream, durable: "d"))
            ) { error in
                XCTAssertEqual((error as? NATSError)?.kind, .invalidOption, "\(error)")
                XCTAssertTrue("\(error)".contains("stream name"), "\(error)")
                XCTAssertTrue("\(error)".contains(rule), "\(name.debugDescription): \(error)")
            }
            XCTAssertThrowsError(
                try bridge.export(Event<Int>(), to: "names.stored.a", delivery: .atLeastOnce(stream: stream))
            ) { error in
                XCTAssertEqual((error as? NATSError)?.kind, .invalidOption, "\(error)")
                XCTAssertTrue("\(error)".contains(rule), "\(name.debugDescription): \(error)")
            }
            // A valid stream with a bad durable consumer name.
            if !name.isEmpty {
                let good = NATSStream(name: "NAMES", subjects: ["names.stored.>"])
                XCTAssertThrowsError(
                    try bridge.import(
                        "names.stored.a", into: Event<Int>(), delivery: .atLeastOnce(stream: good, durable: name))
                ) { error in
                    XCTAssertEqual((error as? NATSError)?.kind, .invalidOption, "\(error)")
                    XCTAssertTrue("\(error)".contains("durable consumer name"), "\(error)")
                    XCTAssertTrue("\(error)".contains(rule), "\(name.debugDescription): \(error)")
                }
            }
            // The unrelated import keeps receiving what is published right after.
            sent += 1
            local.send(sent)
            XCTAssertTrue(
                waitUntil(timeout: 5) { received.count == sent }, "\(name.debugDescription): \(received.values)")
        }
        XCTAssertEqual(received.values, Array(1...sent))
        XCTAssertEqual(log.count { $0 == .disconnected }, 0, "\(log.values)")
        XCTAssertFalse(bridge.isClosed)
    }

    func testBucketsAndKeysBreakingCNATSRulesAreRefusedNamingTheRule() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(options: options(server), status: log.event)
        defer { bridge.close() }
        let cases: [(bucket: String, key: String, rule: String)] = [
            ("b k", "key", "U+0020 SPACE"), ("caf\u{E9}", "key", "U+00E9"), ("", "key", "empty"),
            ("bucket", "a b", "U+0020 SPACE"), ("bucket", "a#b", "U+0023"), ("bucket", "a..b", "empty token"),
            ("bucket", ".a", "empty token"), ("bucket", "a\\b", "U+005C"), ("bucket", "caf\u{E9}", "U+00E9"),
            ("bucket", "a>", "U+003E"),
            (String(repeating: "b", count: 253), "key", "255"),
        ]
        for (bucket, key, rule) in cases {
            XCTAssertThrowsError(try bridge.mirror(ObservableValue(0), bucket: bucket, key: key)) { error in
                XCTAssertEqual((error as? NATSError)?.kind, .invalidSubject, "\(error)")
                XCTAssertTrue("\(error)".contains(rule), "\(bucket) \(key): \(error)")
            }
        }
        // What the rules allow works.
        let mirror = try bridge.mirror(ObservableValue(5), bucket: "b-1_ok", key: "a/b=d.e-f_g")
        XCTAssertEqual(mirror.publishedCount, 1)
        mirror.cancel()
        XCTAssertEqual(log.count { $0 == .disconnected }, 0, "\(log.values)")
    }

    // MARK: One subject per key

    func testAKeyListedTwiceIsExportedOnce() async throws {
        let (publisher, subscriber) = try makeBridgePair()
        let prefix = NATSTestEnvironment.uniqueSubject()
        let keyed = KeyedEvent<String, Int>()
        let export = try publisher.export(keyed, keys: ["a", "a", "b", "a"], toPrefix: prefix)
        XCTAssertEqual(export.publishers.count, 2, "one publisher per distinct key")

        let everything = Event<NATSKeyedValue<String, Int>>()
        let received = everything.record()
        try subscriber.import(prefix: prefix, matching: ">", into: everything)
        keyed.send(1, forKey: "a")
        keyed.send(2, forKey: "b")
        let values = try await received.values(count: 2, timeout: .seconds(10))
        try await received.expectNoMoreValues(within: .milliseconds(200))
        XCTAssertEqual(values.map { "\($0.key)=\($0.value)" }.sorted(), ["a=1", "b=2"])
    }

    func testKeysEqualUnderEqualityHaveOneSubject() async throws {
        let composed = "\u{E9}"
        let decomposed = "e\u{301}"
        XCTAssertEqual(composed, decomposed, "Swift's == compares canonical equivalents as equal")
        XCTAssertEqual(NATSSubject.escapeToken(composed), NATSSubject.escapeToken(decomposed))
        XCTAssertEqual(Array(NATSSubject.escapeToken(decomposed).utf8), [0xC3, 0xA9], "NFC")
        XCTAssertEqual(NATSSubject.pattern(forKey: decomposed), NATSSubject.pattern(forKey: composed))
        XCTAssertEqual(
            Array(NATSSubject.escapeToken("a.\u{301}".decomposedStringWithCanonicalMapping).utf8),
            Array(NATSSubject.escapeToken("a.\u{301}").utf8))
        // Only the NFC token is a key: a decomposed token on the wire is not one.
        XCTAssertNil(NATSSubject.unescapeToken(Substring(decomposed)))
        XCTAssertNil(NATSSubject.unescapeToken("e%CC%81"))
        XCTAssertNil(String(natsSubjectTokens: [Substring(decomposed)]))
        XCTAssertEqual(String(natsSubjectTokens: [Substring(composed)]), composed)

        let (publisher, subscriber) = try makeBridgePair()
        let prefix = NATSTestEnvironment.uniqueSubject()
        let keyed = KeyedEvent<String, Int>()
        let export = try publisher.export(keyed, keys: [composed, decomposed], toPrefix: prefix)
        XCTAssertEqual(export.publishers.count, 1)

        let everything = Event<NATSKeyedValue<String, Int>>()
        let all = everything.record()
        try subscriber.import(prefix: prefix, matching: ">", into: everything)
        // One key imported by its other spelling.
        let oneKey = KeyedEvent<String, Int>()
        let only = oneKey.record(key: decomposed)
        try subscriber.import(prefix: prefix, matching: NATSSubject.pattern(forKey: decomposed)!, into: oneKey)

        keyed.send(1, forKey: composed)
        keyed.send(2, forKey: decomposed)
        let allValues = try await all.values(count: 2, timeout: .seconds(10))
        let onlyValues = try await only.values(count: 2, timeout: .seconds(10))
        try await all.expectNoMoreValues(within: .milliseconds(200))
        try await only.expectNoMoreValues(within: .milliseconds(1))
        XCTAssertEqual(allValues.map(\.value), [1, 2])
        XCTAssertEqual(onlyValues, [1, 2])
    }

    // MARK: Bytes and scalars, never Characters

    /// Keys whose first scalar joins the `.` before it into one `Character`.
    static let joiningKeys = [
        "\u{301}", "\u{200D}", "\u{FE0F}", "\u{1F3FB}", "\u{308}", "\u{308}x", "\u{200D}\u{200D}",
    ]

    func testSubjectsAreSplitAsBytes() {
        for key in Self.joiningKeys {
            XCTAssertTrue(NATSSubject.isValidPublishSubject("p.\(key)"), key.debugDescription)
            XCTAssertTrue(NATSSubject.isValidPattern("p.\(key)"), key.debugDescription)
            XCTAssertTrue(NATSSubject.isValidPattern("p.*.\(key)"), key.debugDescription)
            XCTAssertEqual(NATSSubject.pattern(forKey: key), key, key.debugDescription)
            XCTAssertEqual(NATSSubject.unescapeToken(Substring(key)), key, key.debugDescription)
        }
        // A `.` a mark follows is still a separator: an empty token, and a wildcard a mark joins is no wildcard.
        XCTAssertFalse(NATSSubject.isValidPublishSubject("p..\u{301}"))
        XCTAssertFalse(NATSSubject.isValidPattern("p.>\u{301}"))
        XCTAssertFalse(NATSSubject.isValidPattern("p.*\u{301}"))
    }

    func testKeysStartingWithACombiningScalarCanBeImportedOneByOne() async throws {
        let (publisher, subscriber) = try makeBridgePair()
        let prefix = NATSTestEnvironment.uniqueSubject()
        let keys = Self.joiningKeys
        let keyed = KeyedEvent<String, Int>()
        try publisher.export(keyed, keys: keys, toPrefix: prefix)
        var collected: [Recorder<(key: String, value: Int)>] = []
        for key in keys {
            let oneKey = KeyedEvent<String, Int>()
            collected.append(oneKey.forKeys(keys).record())
            let pattern = try XCTUnwrap(NATSSubject.pattern(forKey: key))
            try subscriber.import(prefix: prefix, matching: pattern, into: oneKey)
        }
        for (index, key) in keys.enumerated() { keyed.send(index, forKey: key) }
        for (index, key) in keys.enumerated() {
            let received = try await collected[index].next(timeout: .seconds(10))
            XCTAssertEqual("\(received.key.debugDescription)=\(received.value)", "\(key.debugDescription)=\(index)")
        }
        // What a second key could still deliver would arrive within a round trip: 200 ms for all of them.
        try await collected[0].expectNoMoreValues(within: .milliseconds(200))
        for recorder in collected { try await recorder.expectNoMoreValues(within: .milliseconds(1)) }
    }
}
