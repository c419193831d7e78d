import Foundation
import ObserverNATS
import ObserverSwift
import XCTest

/// Errors say what was wrong in the user's terms; cnats' own text, with its source locations,
/// is only the `detail`.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSErrorTextTests: XCTestCase {
    /// Whether `text` has a cnats source location such as `(conn.c:2088)`.
    func hasSourceLocation(_ text: String) -> Bool {
        text.range(of: #"\([a-z_]+\.c:[0-9]+\)"#, options: .regularExpression) != nil
    }

    func testURLsThatAreNotNATSURLsAreRefusedInTheUsersTerms() {
        let cases: [(url: String, reason: String)] = [
            ("not a url", "U+0020 SPACE"), ("", "it is empty"), ("http://127.0.0.1:4222", "scheme is \"http\""),
            ("nats://127.0.0.1:port", "port \"port\""), ("nats://127.0.0.1:70000", "port \"70000\""),
            ("nats://host\tname:4222", "U+0009"),
        ]
        for (url, reason) in cases {
            var options = NATSOptions(servers: [url])
            options.connectTimeout = .milliseconds(200)
            options.maxReconnectAttempts = 0
            XCTAssertThrowsError(try NATSBridge(options: options)) { error in
                guard let error = error as? NATSError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.kind, .invalidOption, error.message)
                XCTAssertTrue(error.message.hasPrefix("not a valid NATS URL: \"\(url)\""), error.message)
                XCTAssertTrue(error.message.contains(reason), error.message)
                XCTAssertFalse(hasSourceLocation(error.message), error.message)
            }
        }
        // Every URL is checked, not only the first.
        XCTAssertThrowsError(try NATSBridge(options: NATSOptions(servers: ["nats://127.0.0.1:4222", "not a url"]))) {
            XCTAssertTrue("\($0)".hasPrefix("not a valid NATS URL: \"not a url\""), "\($0)")
        }
    }

    func testURLsCNATSAcceptsStayAccepted() throws {
        let url = try NATSTestEnvironment.url()
        let port = try XCTUnwrap(url.split(separator: ":").last)
        for accepted in [url, "127.0.0.1:\(port)", "NATS://127.0.0.1:\(port)", "nats://user:pw@127.0.0.1:\(port)"] {
            let bridge = try NATSBridge(options: NATSOptions(servers: [accepted]))
            bridge.close()
        }
    }

    func testCNATSTextIsTheDetailNotTheMessage() throws {
        // A port nothing listens on: cnats' error, with its source location in the detail only.
        var options = NATSOptions(servers: ["nats://127.0.0.1:1"])
        options.connectTimeout = .milliseconds(200)
        options.maxReconnectAttempts = 0
        XCTAssertThrowsError(try NATSBridge(options: options)) { error in
            guard let error = error as? NATSError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .unreachable)
            XCTAssertTrue(error.message.hasPrefix("connecting to nats://127.0.0.1:1: "), error.message)
            XCTAssertFalse(hasSourceLocation(error.message), error.message)
            XCTAssertTrue(hasSourceLocation(error.detail ?? ""), "\(String(describing: error.detail))")
        }
        // A JetStream error keeps the server's reason in the message, without the location.
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let subject = NATSTestEnvironment.uniqueSubject()
        let stream = NATSStream(name: "ERRORTEXT\(UInt32.random(in: 0 ... .max))", subjects: [subject], replicas: 3)
        XCTAssertThrowsError(try bridge.export(Event<Int>(), to: subject, delivery: .atLeastOnce(stream: stream))) {
            error in
            guard let error = error as? NATSError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.kind, .jetStream)
            XCTAssertTrue(error.message.contains("replicas"), error.message)
            XCTAssertFalse(hasSourceLocation(error.message), error.message)
            XCTAssertTrue(hasSourceLocation(error.detail ?? ""), "\(String(describing: error.detail))")
        }
    }
}
