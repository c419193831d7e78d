import Foundation
import XCTest

@testable import ObserverNATS

/// The server's denial text read as the server wrote it: Go's `%q` quoting undone exactly, the
/// operation told from the words, a text cut off before the subject's closing quote recognised.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSDenialTextTests: XCTestCase {
    /// Subjects and what Go's `strconv.Quote` makes of them (without the quotes).
    static let quoted: [(subject: String, quoted: String)] = [
        ("a.b", "a.b"), ("q\"q", "q\\\"q"), ("b\\b", "b\\\\b"), ("z\u{200B}z", "z\\u200bz"),
        ("f\u{FEFF}f", "f\\ufefff"),
        ("h\u{AD}h", "h\\u00adh"), ("c\u{81}c", "c\\u0081c"), ("p\u{E000}p", "p\\ue000p"), ("\u{E9}", "\u{E9}"),
        ("\u{7F}", "\\x7f"), ("\u{F0000}", "\\U000f0000"), ("\u{1F600}", "\u{1F600}"), ("t\tn\n", "t\\tn\\n"),
    ]

    func testGoQuotedSubjectsAreUnquotedToTheirBytes() {
        for (subject, quoted) in Self.quoted {
            let text = "Permissions Violation for Publish to \"\(quoted)\""
            let denial = PermissionDenials.parse(text)
            XCTAssertEqual(denial?.operation, .publish, text)
            XCTAssertEqual(denial?.subject, Array(subject.utf8), text)
            XCTAssertEqual(denial?.text, text)
        }
        // What Go's Unquote also reads: upper-case hex, octal, and a byte that is no UTF-8.
        XCTAssertEqual(GoQuoted.unquote(ArraySlice("\\u200B\\101\\xff\"".utf8)), [0xE2, 0x80, 0x8B, 0x41, 0xFF])
        // Cut off (cnats keeps 255 bytes), or escapes Go would not write or read.
        for bad in ["abc", "ab\\", "ab\\u20\"", "a\\q\"", "a\\uD800\"", "a\\777\"", "a\nb\""] {
            XCTAssertNil(GoQuoted.unquote(ArraySlice(bad.utf8)), bad.debugDescription)
        }
    }

    func testTheOperationAndTheSubjectAreReadFromTheWords() {
        let subscription = PermissionDenials.parse(
            "permissions violation for subscription to \"a.\\\"b\" using queue \"q\"")
        XCTAssertEqual(subscription?.operation, .subscription)
        XCTAssertEqual(subscription?.subject, Array("a.\"b".utf8))
        let reload = PermissionDenials.parse("Permissions Violation for Subscription to \"k.s\" (sid \"3\")")
        XCTAssertEqual(reload?.subject, Array("k.s".utf8))
        // A subject cut off: the operation is known, the subject is not.
        let cut = PermissionDenials.parse(
            "Permissions Violation for Publish to \"" + String(repeating: "s", count: 230))
        XCTAssertEqual(cut?.operation, .publish)
        XCTAssertNil(cut?.subject ?? nil)
        XCTAssertNil(PermissionDenials.parse("Permissions Violation for Publish with Reply of \"r\""))
        XCTAssertNil(PermissionDenials.parse("Authorization Violation"))
        // Text before the words whose lower case is longer than its own (U+0130): found by bytes.
        XCTAssertEqual(
            PermissionDenials.parse("\u{130}\u{130} Permissions Violation for Publish to \"x.y\"")?.subject,
            Array("x.y".utf8))
    }

    func testQuotedLengthCountsEachEscapeAsTheServerWritesIt() {
        for (subject, quoted) in Self.quoted where !subject.contains("\t") && !subject.contains("\u{7F}") {
            XCTAssertEqual(NATSSubject.quotedSubjectBytes(subject), quoted.utf8.count, subject.debugDescription)
        }
        // A character assigned after Unicode 13 counts as escaped: an older Go escapes it.
        XCTAssertEqual(NATSSubject.quotedSubjectBytes("\u{1FAE0}"), 10)
        // Unassigned.
        XCTAssertEqual(NATSSubject.quotedSubjectBytes("\u{0378}"), 6)
    }
}
