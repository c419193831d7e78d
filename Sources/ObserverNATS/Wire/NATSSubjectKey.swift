import Foundation

/// A key of a `KeyedEvent` that the bridge can carry in a subject: each key
/// is one or more subject tokens after the export's prefix.
///
/// `String` keys are one token each. Characters NATS reserves in a token
/// are percent-escaped, so every string round-trips and no key can act as
/// a wildcard or split into two tokens: `.` → `%2E`, `*` → `%2A`,
/// `>` → `%3E`, `%` → `%25`, and every whitespace or control character by
/// its UTF-8 bytes (space → `%20`). The empty string is the token `%`.
///
/// A `String` key's token is made from the key's Unicode Normalization Form C (NFC), so that
/// keys equal under `==` (which compares canonically equivalent strings as equal) have one
/// subject: `"\u{E9}"` and `"e\u{301}"` are both the token `é` (the bytes `C3 A9`). A received
/// token that is not in NFC is no key (the message counts as malformed), as `05` is no `Int` key.
/// Subjects are compared and split as bytes, never as `Character`s: a key may start with a
/// combining mark (`"\u{301}"`), a joiner or a modifier.
/// Integer keys are their canonical decimal digits (`-` for a negative one, no
/// `+`, no leading zero): `05` or `+5` under the prefix is no key, and counts as
/// malformed.
///
/// To give keys several tokens (so that wildcards can select a level),
/// conform your own type and return more than one token.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public protocol NATSSubjectKey: Hashable {
    /// The subject tokens of this key: each non-empty, without `.`, `*`, `>` or whitespace.
    /// Keys equal under `==` must return the same tokens (an export of several keys refuses two
    /// unequal keys with one subject).
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
        guard tokens.count == 1, let key = Int(tokens[0]), String(key).utf8.elementsEqual(tokens[0].utf8) else {
            return nil
        }
        self = key
    }

    /// One token per key.
    public static var natsSubjectTokenCount: Int? { 1 }
}

/// Subject syntax: validation, escaping, matching.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public enum NATSSubject {
    /// The longest subject or pattern the bridge exports to or imports, in bytes as the server
    /// writes it in a permission denial: with Go's `%q` quoting, in which `"` and `\` take 2 bytes
    /// each and a character the server escapes takes its escape (U+200B is `\u200b`, 6 bytes), and
    /// every other character its UTF-8 bytes. ``quotedSubjectBytes(_:)`` counts them.
    ///
    /// The server names the subject of a denial only in its error text (`-ERR 'Permissions
    /// Violation for Subscription to "<subject>"'`), and cnats keeps 255 bytes of that text, with
    /// its quotes: a subscription's subject is whole up to 210 quoted bytes, a publish's up to 215.
    /// Within 210 bytes every denial of a subject the bridge uses names all of it, so it reaches the
    /// export or import that sent it; a longer subject is refused before anything is sent with it.
    public static let maximumSubjectBytes = 210

    /// The longest subject cnats is asked to send for the bridge's own requests (JetStream API
    /// subjects, with stream and consumer names of up to 255 bytes), in UTF-8 bytes.
    ///
    /// A NATS server refuses a protocol line longer than its `max_control_line`, 4 096 bytes by
    /// default, counted after the operation's name (measured with nats-server 2.9: `PUB` with a
    /// 4 094-byte subject and `0` passes, one byte more closes the connection with "maximum
    /// control line exceeded", and every import on it stops). The longest line the bridge sends
    /// is a JetStream publish, `HPUB <subject> <reply> <header size> <total size>`, whose reply
    /// subject cnats makes about 24 bytes long: 256 bytes are kept for everything after the
    /// subject, which leaves 3 840.
    static let maximumProtocolSubjectBytes = 3_840

    /// Whether `subject` is a valid subject to publish to: non-empty tokens separated
    /// by `.`, no wildcards, no whitespace, at most ``maximumSubjectBytes`` quoted bytes.
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

    /// How many bytes `subject` takes between the quotes of the server's denial (see
    /// ``maximumSubjectBytes``). A character counts as escaped unless Go certainly prints it:
    /// a letter, mark, number, punctuation or symbol assigned by Unicode 13 (the Unicode of the Go
    /// that builds nats-server 2.9; a later Go prints more characters as they are, never fewer).
    public static func quotedSubjectBytes(_ subject: String) -> Int {
        var count = 0
        for scalar in subject.unicodeScalars {
            if scalar == "\"" || scalar == "\\" {
                count += 2
            } else if isPrintedUnescaped(scalar) {
                count += UTF8.width(scalar)
            } else if scalar.value < 0x80 {
                count += 4  // \xHH (or a shorter \n, \t, ...)
            } else if scalar.value < 0x1_0000 {
                count += 6  // \uHHHH
            } else {
                count += 10  // \UHHHHHHHH
            }
        }
        return count
    }

    /// Whether Go's `%q` writes `scalar` as it is, for every Go that builds nats-server 2.9 or later.
    static func isPrintedUnescaped(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 { return scalar.value >= 0x20 && scalar.value < 0x7F }
        guard let age = scalar.properties.age, age.major < 13 || (age.major == 13 && age.minor == 0) else {
            return false
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber,
            .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
            .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
            return true
        default:
            return false
        }
    }

    /// Why `subject` is too long for an export or import, or nil when it is not.
    static func lengthProblem(_ subject: String, what: String) -> String? {
        let bytes = quotedSubjectBytes(subject)
        guard bytes > maximumSubjectBytes else { return nil }
        let raw = subject.utf8.count
        let measure =
            raw == bytes ? "\(bytes) bytes long" : "\(bytes) bytes long as the server quotes it (\(raw) in UTF-8)"
        return "\(what) is \(measure), over the \(maximumSubjectBytes) bytes a subject may have "
            + "(a longer subject would not be whole in the server's permission denials, which cnats keeps to "
            + "255 bytes; see NATSSubject.maximumSubjectBytes)"
    }

    /// Why `subject`, one of the bridge's own requests, is too long to send, or nil when it is not.
    static func protocolLengthProblem(_ subject: String, what: String) -> String? {
        let bytes = subject.utf8.count
        guard bytes > maximumProtocolSubjectBytes else { return nil }
        return "\(what) is \(bytes) bytes long, over the \(maximumProtocolSubjectBytes) bytes a subject may have "
            + "(NATS servers refuse a protocol line over 4096 bytes by default)"
    }

    static func validate(_ subject: String, allowWildcards: Bool) -> Bool {
        if quotedSubjectBytes(subject) > maximumSubjectBytes { return false }
        let tokens = tokens(of: subject)
        if tokens.isEmpty { return false }
        for (index, token) in tokens.enumerated() {
            if token.isEmpty { return false }
            if token.unicodeScalars.contains(where: isReservedInToken) {
                guard allowWildcards else { return false }
                if isToken(token, "*") { continue }
                if isToken(token, ">") && index == tokens.count - 1 { continue }
                return false
            }
        }
        return true
    }

    /// The tokens of `subject`, split at each `.` byte. Never split by `Character`: a `.` followed
    /// by a combining mark is one `Character`, and the separator would not be seen.
    static func tokens(of subject: Substring) -> [Substring] {
        subject.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { Substring($0) }
    }

    static func tokens(of subject: String) -> [Substring] { tokens(of: Substring(subject)) }

    /// Whether `token` is exactly the bytes of `text` (`==` on strings would compare canonical
    /// equivalents, and `Character`s, as equal).
    static func isToken(_ token: Substring, _ text: StaticString) -> Bool {
        text.withUTF8Buffer { token.utf8.elementsEqual($0) }
    }

    /// The form a key's text takes in a subject: its Unicode Normalization Form C, as Swift's own
    /// `==` computes it (two strings are equal under `==` exactly when these bytes are). Foundation's
    /// `precomposedStringWithCanonicalMapping` is not used: on Linux it leaves a precomposed Hangul
    /// LV syllable followed by a trailing jamo (`"\u{AC00}\u{11A8}"`, equal to `"\u{AC01}"`) as it is.
    static func canonical(_ text: String) -> String {
        isCanonical(Substring(text)) ? text : String(decoding: text._nfcCodeUnits, as: UTF8.self)
    }

    /// Whether `text` is in NFC. Every scalar below U+0300 (UTF-8 bytes below 0xCC) is NFC and
    /// composes with nothing before it, so such text needs no normalization to tell.
    static func isCanonical(_ text: Substring) -> Bool {
        if text.utf8.allSatisfy({ $0 < 0xCC }) { return true }
        return String(text)._nfcCodeUnits.elementsEqual(text.utf8)
    }

    /// Characters that cannot appear inside a token as data.
    static func isReservedInToken(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "." || scalar == "*" || scalar == ">" || scalar.value < 0x21 || scalar.value == 0x7F
            || scalar.properties.isWhitespace
    }

    /// One token for any string: its NFC form (see ``NATSSubjectKey``), with reserved characters
    /// and `%` percent-escaped; "" as `%`. Strings equal under `==` have the same token.
    public static func escapeToken(_ key: String) -> String {
        if key.isEmpty { return "%" }
        let key = canonical(key)
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
    /// that no string escapes to (a bad escape, an unescaped reserved character, or text not in NFC).
    public static func unescapeToken(_ token: Substring) -> String? {
        if isToken(token, "%") { return "" }
        if !token.utf8.contains(UInt8(ascii: "%")) {
            // No escape: the token is the string, if it is one `escapeToken` leaves alone
            // (not empty, nothing reserved, in NFC).
            if token.isEmpty || token.unicodeScalars.contains(where: isReservedInToken) || !isCanonical(token) {
                return nil
            }
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
        // Only the canonical escape of a string decodes to it (compared as bytes).
        return escapeToken(key).utf8.elementsEqual(token.utf8) ? key : nil
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
        let subjectTokens = tokens(of: subject)
        let patternTokens = tokens(of: pattern)
        for (index, token) in patternTokens.enumerated() {
            if isToken(token, ">") { return subjectTokens.count > index }
            guard index < subjectTokens.count else { return false }
            if !isToken(token, "*") && !token.utf8.elementsEqual(subjectTokens[index].utf8) { return false }
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

/// The rules for the names the bridge puts into JetStream API subjects and key-value subjects:
/// each check returns the rule a name breaks, in words, or nil for a name that may be used. A name
/// is checked before anything is sent with it: a stream named `K4 N` would make cnats send
/// `$JS.API.STREAM.INFO.K4 N`, a line the server answers with a parse error and by closing the
/// connection, and every import of the bridge would miss what is published while it reconnects.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
enum NATSNames {
    /// The longest stream or consumer name nats-server accepts, in bytes (its `JSMaxNameLen`).
    static let maximumNameBytes = 255

    /// A stream or durable consumer name, as nats-server checks it (`isValidAssetName` and
    /// `JSMaxNameLen` in its sources): 1 to 255 bytes, no space, tab, line break or form feed, no
    /// `.`, `*` or `>` (subject syntax) and no `/` or `\` (the server names directories after
    /// streams and consumers). The bridge also refuses what it refuses in any subject token:
    /// control characters and every other whitespace.
    static func assetNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "it is empty" }
        for scalar in name.unicodeScalars {
            switch scalar {
            case ".": return "it contains '.', which separates subject tokens"
            case "*", ">": return "it contains '\(scalar)', a subject wildcard"
            case "/", "\\": return "it contains '\(scalar)', a path separator (the server names directories after it)"
            default:
                if scalar.properties.isWhitespace {
                    return "it contains whitespace (\(describe(scalar))), which ends a token of the protocol line"
                }
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    return "it contains the control character \(describe(scalar))"
                }
            }
        }
        let bytes = name.utf8.count
        if bytes > maximumNameBytes {
            return "it is \(bytes) bytes long, over the \(maximumNameBytes) bytes the server allows"
        }
        return nil
    }

    /// A key-value bucket name, as cnats checks it: ASCII letters, digits, `-` and `_`.
    static func bucketProblem(_ bucket: String) -> String? {
        if bucket.isEmpty { return "it is empty" }
        if let scalar = bucket.unicodeScalars.first(where: { !isASCIIAlphanumeric($0) && $0 != "-" && $0 != "_" }) {
            return "it contains \(describe(scalar)); a bucket name has ASCII letters, digits, '-' and '_' only"
        }
        // The bucket is the stream `KV_<bucket>`.
        let bytes = bucket.utf8.count + 3
        if bytes > maximumNameBytes {
            return "its stream, KV_\(bucket.prefix(8))…, is \(bytes) bytes long, over the \(maximumNameBytes) bytes "
                + "the server allows"
        }
        return nil
    }

    /// A key-value key, as cnats checks it: ASCII letters, digits, `-`, `_`, `/`, `=` and `.`,
    /// where a `.` separates two non-empty tokens. cnats also accepts `\`, but a mirror of such a
    /// key cannot watch it (cnats 3.4 sends the key unescaped in the JSON of its stream lookup,
    /// and the server answers "no stream matches subject"), so it is refused here.
    static func keyValueKeyProblem(_ key: String) -> String? {
        if key.isEmpty { return "it is empty" }
        if let scalar = key.unicodeScalars.first(where: {
            !isASCIIAlphanumeric($0) && !"-_/=.".unicodeScalars.contains($0)
        }) {
            return "it contains \(describe(scalar)); a key has ASCII letters, digits and '-', '_', '/', '=', '.' only"
        }
        if NATSSubject.tokens(of: key).contains(where: \.isEmpty) {
            return "it has an empty token (a '.' at its start or end, or two in a row)"
        }
        return nil
    }

    static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    /// `U+0020 SPACE`, or `U+0007` for a scalar without a name.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        let code =
            "U+" + String(repeating: "0", count: max(0, 4 - String(scalar.value, radix: 16).count))
            + String(scalar.value, radix: 16, uppercase: true)
        if let name = scalar.properties.name { return "\(code) \(name)" }
        return code
    }
}
