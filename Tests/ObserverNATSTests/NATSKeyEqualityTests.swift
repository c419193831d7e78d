import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// A `String` key's subject is a function of its `==` class: checked against Swift's own `==` over
/// keys built from every kind of Unicode composition, and end to end for Hangul syllables.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSKeyEqualityTests: XCTestCase {
    /// Pieces of keys, one or more scalars each, covering each way canonical equivalence joins
    /// or keeps apart two spellings.
    static let pieces: [String] = [
        // Bases, and precomposed letters.
        "a", "e", "d", "A", "\u{E9}", "\u{C5}", "\u{1E0B}", "\u{1E0D}", "\u{1EA1}",
        // Combining marks of several classes (230 above, 220 below, 202 attached, 1 overlay,
        // 240, 9 virama, 0 a starter that is a mark).
        "\u{301}", "\u{300}", "\u{308}", "\u{307}", "\u{323}", "\u{316}", "\u{327}", "\u{334}", "\u{345}",
        "\u{94D}", "\u{93C}", "\u{34F}",
        // Hangul: leading, vowel and trailing jamo, an LV and an LVT syllable, a trailing jamo
        // before the first that composes (U+11A7), a vowel that does not compose (U+1176).
        "\u{1100}", "\u{1161}", "\u{11A8}", "\u{11AB}", "\u{11A7}", "\u{1176}", "\u{AC00}", "\u{AC01}",
        "\u{B098}", "\u{B09C}",
        // Singletons (Angstrom sign, Ohm sign, U+0340), a non-starter decomposition (U+0344),
        // composition exclusions (U+0958, U+2ADC).
        "\u{212B}", "\u{2126}", "\u{3A9}", "\u{340}", "\u{344}", "\u{958}", "\u{915}", "\u{2ADC}", "\u{2ADD}",
        // Compatibility characters, which canonical equivalence does not fold.
        "\u{FB01}", "fi", "\u{2460}", "1", "\u{FF21}", "\u{B5}", "\u{3BC}", "\u{17F}", "s",
        // Reserved in a subject token, and escaped.
        ".", "%", " ",
    ]

    /// Every key of one, two or three pieces.
    static var keys: [String] {
        var keys = pieces
        for first in pieces {
            for second in pieces {
                keys.append(first + second)
                for third in ["\u{301}", "\u{323}", "\u{11A8}", "\u{1161}", "a", "\u{AC00}"] {
                    keys.append(first + second + third)
                }
            }
        }
        return keys
    }

    func testASubjectTokenIsAFunctionOfTheKeysEqualityClass() {
        let keys = Self.keys
        // Swift's `Set` and `Dictionary` group strings by `==` (hashing agrees with it).
        var tokensByKey: [String: Set<[UInt8]>] = [:]
        for key in keys {
            let token = NATSSubject.escapeToken(key)
            tokensByKey[key, default: []].insert(Array(token.utf8))
            let decoded = NATSSubject.unescapeToken(Substring(token))
            XCTAssertEqual(decoded, key, "\(key.debugDescription) does not round-trip")
            XCTAssertTrue(NATSSubject.isValidPublishSubject("p." + token), token.debugDescription)
        }
        var ownerOfToken: [[UInt8]: String] = [:]
        for (key, tokens) in tokensByKey {
            XCTAssertEqual(tokens.count, 1, "keys equal to \(key.debugDescription) have \(tokens.count) tokens")
            for token in tokens {
                if let other = ownerOfToken.updateValue(key, forKey: token) {
                    XCTFail("unequal keys \(other.debugDescription) and \(key.debugDescription) share a token")
                }
            }
        }
        XCTAssertGreaterThan(tokensByKey.count, 10_000, "the generated keys are that many classes")
        XCTAssertLessThan(tokensByKey.count, keys.count, "some generated keys are equal under ==")
    }

    func testHangulSyllablesSpelledEitherWayMeet() throws {
        let pairs = [
            ("\u{AC00}\u{11A8}", "\u{AC01}"), ("\u{B098}\u{11AB}", "\u{B09C}"),
            ("\u{1100}\u{1161}\u{11A8}", "\u{AC01}"),
        ]
        for (spelled, precomposed) in pairs {
            XCTAssertEqual(spelled, precomposed)
            XCTAssertEqual(
                Array(NATSSubject.escapeToken(spelled).utf8), Array(NATSSubject.escapeToken(precomposed).utf8),
                spelled.debugDescription)
        }
        let (publisher, subscriber) = try makeBridgePair()
        let prefix = NATSTestEnvironment.uniqueSubject()
        let keyed = KeyedEvent<String, Int>()
        try publisher.export(keyed, keys: pairs.map(\.0), toPrefix: prefix)
        let remote = KeyedEvent<String, Int>()
        let received = Received<String>()
        var tokens: [Subscription] = []
        defer { tokens.forEach { $0.cancel() } }
        for (index, (_, precomposed)) in pairs.enumerated() where index < 2 {
            tokens.append(remote.subscribe(key: precomposed) { received.append("\(index)=\($0)") })
            try subscriber.import(prefix: prefix, matching: NATSSubject.pattern(forKey: precomposed)!, into: remote)
        }
        for (index, (spelled, _)) in pairs.enumerated() where index < 2 { keyed.send(index, forKey: spelled) }
        XCTAssertTrue(waitUntil(timeout: 5) { received.count == 2 }, "\(received.values)")
        XCTAssertEqual(received.values.sorted(), ["0=0", "1=1"])
    }
}
