import Foundation
import ObserverNATS
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

/// Keyed events: keys become subject tokens, wildcards select keys.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSKeyedTests: XCTestCase {
    func testKeysWithReservedCharactersRoundTripThroughEscapedTokens() {
        let keys = ["plain", "", "%", "a.b", "*", ">", "a b", "tab\there", "line\nbreak", "100%", "é.ü", "%2E"]
        var tokens = Set<String>()
        for key in keys {
            let token = NATSSubject.escapeToken(key)
            XCTAssertFalse(token.isEmpty)
            XCTAssertFalse(token.contains(where: { ".*> \t\r\n".contains($0) }), "token \(token) of \(key)")
            XCTAssertEqual(NATSSubject.unescapeToken(Substring(token)), key)
            tokens.insert(token)
        }
        XCTAssertEqual(tokens.count, keys.count, "distinct keys get distinct tokens")
        XCTAssertEqual(NATSSubject.escapeToken("a.b"), "a%2Eb")
        XCTAssertEqual(NATSSubject.escapeToken("a b"), "a%20b")
        XCTAssertEqual(NATSSubject.escapeToken(""), "%")
        // Tokens that no key escapes to are not keys.
        for token in ["%2", "%zz", "a%2eb", "%41"] {
            XCTAssertNil(NATSSubject.unescapeToken(Substring(token)), token)
        }
    }

    func testKeyedExportReachesWildcardAndLiteralImportsPerKey() async throws {
        let (publisher, subscriber) = try makeBridgePair()
        let prefix = NATSTestEnvironment.uniqueSubject()
        let prices = KeyedEvent<String, Double>()
        let keys = ["AAPL", "MSFT", "a.b", "*", ">", "with space", ""]
        try publisher.export(prices, keys: keys, toPrefix: prefix)

        let everything = KeyedEvent<String, Double>()
        let all = everything.forKeys(keys).record()
        let allImport = try subscriber.import(prefix: prefix, matching: ">", into: everything)

        let oneKey = KeyedEvent<String, Double>()
        let only = oneKey.forKeys(keys).record()
        try subscriber.import(prefix: prefix, matching: NATSSubject.escapeToken("a.b"), into: oneKey)

        for (index, key) in keys.enumerated() { prices.send(Double(index), forKey: key) }
        prices.send(99, forKey: "not exported")
        let expected = keys.enumerated().map { "\($1)=\(Double($0))" }
        let allValues = try await all.values(count: keys.count, timeout: .seconds(10))
        let onlyValue = try await only.next(timeout: .seconds(10))
        try await all.expectNoMoreValues(within: .milliseconds(50))
        try await only.expectNoMoreValues(within: .milliseconds(1))
        XCTAssertEqual(allValues.map { "\($0.key)=\($0.value)" }, expected)
        XCTAssertEqual("\(onlyValue.key)=\(onlyValue.value)", "a.b=2.0")
        XCTAssertTrue(waitUntil { allImport.deliveredCount == keys.count })
        XCTAssertEqual(allImport.malformedCount, 0)
        // One publisher per key, interleaved: no number of any of them was skipped.
        for round in 1...3 {
            for (index, key) in keys.enumerated() { prices.send(Double(round * 100 + index), forKey: key) }
        }
        XCTAssertTrue(waitUntil { allImport.deliveredCount == keys.count * 4 })
        XCTAssertEqual(allImport.missedCount, 0)
        all.cancel()
        only.cancel()
    }

    func testIntegerKeysAndKeysThatCannotBeSubjects() throws {
        let (bridge, other) = try makeBridgePair()
        let prefix = NATSTestEnvironment.uniqueSubject()
        let byID = KeyedEvent<Int, String>()
        try bridge.export(byID, keys: [-1, 0, 42], toPrefix: prefix)
        let remote = KeyedEvent<Int, String>()
        let received = Received<String>()
        let token = remote.forKeys([-1, 0, 42]).subscribe { key, value in received.append("\(key):\(value)") }
        defer { token.cancel() }
        let imported = try other.import(prefix: prefix, into: remote)
        byID.send("minus", forKey: -1)
        byID.send("zero", forKey: 0)
        byID.send("answer", forKey: 42)
        XCTAssertTrue(waitUntil { received.count == 3 })
        XCTAssertEqual(received.values, ["-1:minus", "0:zero", "42:answer"])

        // A subject under the prefix whose token is not an Int counts as malformed.
        let stray = Event<String>()
        try bridge.export(stray, to: prefix + ".forty-two")
        stray.send("stray")
        byID.send("after", forKey: 42)
        XCTAssertTrue(waitUntil { received.count == 4 && imported.malformedCount == 1 })
        XCTAssertEqual(received.values.last, "42:after")

        XCTAssertThrowsError(try bridge.export(byID, keys: [1], toPrefix: "a.*")) {
            XCTAssertEqual(($0 as? NATSError)?.kind, .invalidSubject)
        }
        XCTAssertThrowsError(try bridge.import(prefix: "a b", into: remote)) {
            XCTAssertEqual(($0 as? NATSError)?.kind, .invalidSubject)
        }
    }
}

/// An import into an `Event` of keyed values: every key a wildcard matches, with its key.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSAllKeysImportTests: XCTestCase {
    func testAllKeysImportDeliversEveryMatchingKeyWithItsKey() async throws {
        let (publisher, subscriber) = try makeBridgePair()
        let prefix = NATSTestEnvironment.uniqueSubject()
        let prices = KeyedEvent<String, Double>()
        let keys = ["AAPL", "MSFT", "a.b", "*", "with space", ""]
        try publisher.export(prices, keys: keys, toPrefix: prefix)

        let every = Event<NATSKeyedValue<String, Double>>()
        let seen = every.record()
        let imported = try subscriber.import(prefix: prefix, matching: "*", into: every)

        for (index, key) in keys.enumerated() { prices.send(Double(index), forKey: key) }
        let expected = keys.enumerated().map { "\($1)=\(Double($0))" }
        let seenValues = try await seen.values(count: keys.count, timeout: .seconds(10))
        try await seen.expectNoMoreValues(within: .milliseconds(50))
        XCTAssertEqual(
            seenValues.map { "\($0.key)=\($0.value)" }, expected, "every key, none known to the importer in advance")
        XCTAssertEqual(imported.malformedCount, 0)

        // Integer keys: only canonical tokens, as for a KeyedEvent import.
        let numbered = Event<NATSKeyedValue<Int, Int>>()
        let numbers = Received<String>()
        let numberToken = numbered.subscribe { keyed in numbers.append("\(keyed.key)=\(keyed.value)") }
        defer { numberToken.cancel() }
        let numberPrefix = NATSTestEnvironment.uniqueSubject()
        let numberImport = try subscriber.import(prefix: numberPrefix, matching: "*", into: numbered)
        let raw = KeyedEvent<Int, Int>()
        try publisher.export(raw, keys: [7, -3], toPrefix: numberPrefix)
        raw.send(70, forKey: 7)
        raw.send(-30, forKey: -3)
        XCTAssertTrue(waitUntil { numbers.count == 2 })
        XCTAssertEqual(numbers.values, ["7=70", "-3=-30"])
        XCTAssertEqual(numberImport.malformedCount, 0)
    }

    func testAllKeysImportRefusesAPatternNoKeyCanMatch() throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let every = Event<NATSKeyedValue<String, Double>>()
        XCTAssertThrowsError(try bridge.import(prefix: "quotes", matching: "a.b", into: every)) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .invalidSubject)
        }
    }
}
