/// A key of a `KeyedEvent` that the bridge can carry in a subject: each key
/// is one or more subject tokens after the export's prefix.
///
/// `String` keys are one token each. Characters NATS reserves in a token
/// are percent-escaped, so every string round-trips and no key can act as
/// a wildcard or split into two tokens: `.` → `%2E`, `*` → `%2A`,
/// `>` → `%3E`, `%` → `%25`, and every whitespace or control character by
/// its UTF-8 bytes (space → `%20`). The empty string is the token `%`.
/// Integer keys are their canonical decimal digits (`-` for a negative one, no
/// `+`, no leading zero): `05` or `+5` under the prefix is no key, and counts as
/// malformed.
///
/// To give keys several tokens (so that wildcards can select a level),
/// conform your own type and return more than one token.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public protocol NATSSubjectKey: Hashable {
    /// The subject tokens of this key: each non-empty, without `.`, `*`, `>` or whitespace.
    var natsSubjectTokens: [Substring] { get }
    /// The key of these tokens, or nil when they are not one (the message is then malformed).
    /// Only the tokens a key returns as ``natsSubjectTokens`` should decode to it, so that
    /// each key has one subject.
    init?(natsSubjectTokens: [Substring])
    /// How many tokens every key has, or nil when keys differ in their count. Imports use it to
    /// refuse a pattern that can match no key (`matching: "a.b"` for one-token `String` keys).
    static var natsSubjectTokenCount: Int? { get }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSSubjectKey {
    /// Nil: keys may differ in their number of tokens.
    public static var natsSubjectTokenCount: Int? { nil }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension String: NATSSubjectKey {
    public var natsSubjectTokens: [Substring] { [Substring(NATSSubject.escapeToken(self))] }

    public init?(natsSubjectTokens tokens: [Substring]) {
        guard tokens.count == 1, let key = NATSSubject.unescapeToken(tokens[0]) else { return nil }
        self = key
    }

    /// One token per key.
    public static var natsSubjectTokenCount: Int? { 1 }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Int: NATSSubjectKey {
    public var natsSubjectTokens: [Substring] { [Substring(String(self))] }

    public init?(natsSubjectTokens tokens: [Substring]) {
        // Only the digits `String(key)` gives: `Int("+5")` and `Int("05")` are 5 too.
        guard tokens.count == 1, let key = Int(tokens[0]), String(key) == tokens[0] else { return nil }
        self = key
    }

    /// One token per key.
    public static var natsSubjectTokenCount: Int? { 1 }
}

/// Subject syntax: validation, escaping, matching.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public enum NATSSubject {
    /// The longest subject or pattern the bridge publishes to or subscribes, in UTF-8 bytes.
    ///
    /// A NATS server refuses a protocol line longer than its `max_control_line`, 4 096 bytes by
    /// default, counted after the operation's name (measured with nats-server 2.9: `PUB` with a
    /// 4 094-byte subject and `0` passes, one byte more closes the connection with "maximum
    /// control line exceeded", and every import on it stops). The longest line the bridge sends
    /// is a JetStream publish, `HPUB <subject> <reply> <header size> <total size>`, whose reply
    /// subject cnats makes about 24 bytes long: 256 bytes are kept for everything after the
    /// subject, which leaves 3 840.
    public static let maximumSubjectBytes = 3_840

    /// Whether `subject` is a valid subject to publish to: non-empty tokens separated
    /// by `.`, no wildcards, no whitespace, at most ``maximumSubjectBytes`` bytes.
    public static func isValidPublishSubject(_ subject: String) -> Bool {
        validate(subject, allowWildcards: false)
    }

    /// Whether `pattern` is a valid subscription subject: as a publish subject, but a
    /// token may be `*`, and the last token may be `>`.
    public static func isValidPattern(_ pattern: String) -> Bool {
        validate(pattern, allowWildcards: true)
    }

    /// The `matching:` pattern of an import that selects exactly `key` (its tokens, escaped
    /// as ``NATSSubjectKey/natsSubjectTokens`` escapes them): `pattern(forKey: "a.b")` is
    /// `a%2Eb`. Nil for a key without valid tokens.
    public static func pattern<Key: NATSSubjectKey>(forKey key: Key) -> String? {
        let tokens = key.natsSubjectTokens
        if tokens.isEmpty { return nil }
        if tokens.contains(where: { $0.isEmpty || $0.unicodeScalars.contains(where: isReservedInToken) }) {
            return nil
        }
        return tokens.joined(separator: ".")
    }

    /// Why `subject` is too long to use, or nil when it is not.
    static func lengthProblem(_ subject: String, what: String) -> String? {
        let bytes = subject.utf8.count
        guard bytes > maximumSubjectBytes else { return nil }
        return "\(what) is \(bytes) bytes long, over the \(maximumSubjectBytes) bytes a subject may have "
            + "(NATS servers refuse a protocol line over 4096 bytes by default; see NATSSubject.maximumSubjectBytes)"
    }

    static func validate(_ subject: String, allowWildcards: Bool) -> Bool {
        if subject.utf8.count > maximumSubjectBytes { return false }
        let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
        if tokens.isEmpty { return false }
        for (index, token) in tokens.enumerated() {
            if token.isEmpty { return false }
            if token.unicodeScalars.contains(where: isReservedInToken) {
                guard allowWildcards else { return false }
                if token == "*" { continue }
                if token == ">" && index == tokens.count - 1 { continue }
                return false
            }
        }
        return true
    }

    /// Characters that cannot appear inside a token as data.
    static func isReservedInToken(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "." || scalar == "*" || scalar == ">" || scalar.value < 0x21 || scalar.value == 0x7F
            || scalar.properties.isWhitespace
    }

    /// One token for any string: reserved characters and `%` percent-escaped, "" as `%`.
    public static func escapeToken(_ key: String) -> String {
        if key.isEmpty { return "%" }
        if !key.unicodeScalars.contains(where: { $0 == "%" || isReservedInToken($0) }) { return key }
        var token = ""
        token.reserveCapacity(key.utf8.count + 8)
        for scalar in key.unicodeScalars {
            if scalar == "%" || isReservedInToken(scalar) {
                for byte in String(scalar).utf8 {
                    token += "%"
                    token += hexDigit(byte >> 4)
                    token += hexDigit(byte & 0xF)
                }
            } else {
                token.unicodeScalars.append(scalar)
            }
        }
        return token
    }

    /// The string a token escaped by ``escapeToken(_:)`` stands for; nil for a token
    /// that no string escapes to (a bad escape, or an unescaped reserved character).
    public static func unescapeToken(_ token: Substring) -> String? {
        if token == "%" { return "" }
        if !token.utf8.contains(UInt8(ascii: "%")) {
            // No escape: the token is the string, if it is one `escapeToken` leaves alone
            // (not empty, nothing reserved).
            if token.isEmpty || token.unicodeScalars.contains(where: isReservedInToken) { return nil }
            return String(token)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(token.utf8.count)
        var iterator = token.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte != UInt8(ascii: "%") {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        guard let key = String(validating: bytes, as: UTF8.self) else { return nil }
        // Only the canonical escape of a string decodes to it.
        return escapeToken(key) == token ? key : nil
    }

    /// The subject of `key` under `prefix`.
    static func subject<Key: NATSSubjectKey>(prefix: String, key: Key) -> String? {
        let tokens = key.natsSubjectTokens
        if tokens.isEmpty { return nil }
        var subject = prefix
        for token in tokens {
            if token.isEmpty || token.unicodeScalars.contains(where: isReservedInToken) { return nil }
            subject += "."
            subject += token
        }
        return subject
    }

    /// Whether `subject` (no wildcards) matches `pattern` (`*` one token, `>` the rest).
    static func matches(_ subject: Substring, pattern: String) -> Bool {
        let subjectTokens = subject.split(separator: ".", omittingEmptySubsequences: false)
        let patternTokens = pattern.split(separator: ".", omittingEmptySubsequences: false)
        for (index, token) in patternTokens.enumerated() {
            if token == ">" { return subjectTokens.count > index }
            guard index < subjectTokens.count else { return false }
            if token != "*" && token != subjectTokens[index] { return false }
        }
        return subjectTokens.count == patternTokens.count
    }

    private static func hexDigit(_ nibble: UInt8) -> String {
        String(UnicodeScalar(nibble < 10 ? nibble + 48 : nibble + 55))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - 48
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - 55
        default: nil
        }
    }
}
