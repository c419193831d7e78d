import Foundation
import ObserverSwift
import ObserverTestSupport
import XCTest

@testable import ObserverNATS

/// Every denial of every subject a bridge accepts reaches the export or import that sent it,
/// exactly once, with the server's words: subjects at the length limit, subjects with characters
/// the server escapes, subjects equal under `==` but not as bytes, denials that arrive while an
/// import is being made, and permissions granted at run time.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSDenialAttributionTests: XCTestCase {
    /// A server whose user `limited` may publish and subscribe `perm.ok.>` and `perm.é.>` (NFC), plus
    /// `grants` (and what JetStream needs), and whose user `admin` may do everything. The file keeps
    /// its `jetstream` block, so that a reload leaves JetStream running.
    final class PermissionServer {
        let server: OwnedNATSServer
        let file: URL
        let storeDirectory: URL

        init(grants: [String] = []) throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "observer-nats-denials-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            file = directory.appendingPathComponent("server.conf")
            storeDirectory = directory.appendingPathComponent("js")
            try Self.configuration(grants: grants, store: storeDirectory).write(
                to: file, atomically: true, encoding: .utf8)
            server = try OwnedNATSServer(arguments: ["-c", file.path], jetStream: false)
        }

        static func configuration(grants: [String], store: URL) -> String {
            let extra = grants.map { ", \"\($0)\"" }.joined()
            return """
                jetstream { store_dir: "\(store.path)" }
                authorization {
                  users = [
                    {user: admin, password: adminpass}
                    {user: limited, password: limitedpass, permissions: {
                      publish: ["perm.ok.>", "perm.\u{E9}.>", "$JS.API.>", "$JS.ACK.>", "_INBOX.>"\(extra)]
                      subscribe: ["perm.ok.>", "perm.\u{E9}.>", "_INBOX.>", "_observer.>"\(extra)]
                    }}
                  ]
                }
                """
        }

        /// Rewrites the permissions and reloads them; returns once a new connection of `limited`
        /// may subscribe `probe`, a subject the grants allow.
        func grant(_ grants: [String], probe: String) throws -> Bool {
            try Self.configuration(grants: grants, store: storeDirectory).write(
                to: file, atomically: true, encoding: .utf8)
            server.reload()
            return waitUntil(timeout: 10) {
                guard let bridge = try? NATSBridge(options: self.limited()) else { return false }
                defer { bridge.close() }
                return (try? bridge.import(probe, into: Event<Int>())) != nil
            }
        }

        func limited() -> NATSOptions {
            var options = NATSOptions(servers: [server.url])
            options.credentials = .userPassword(user: "limited", password: "limitedpass")
            options.reconnectWait = .milliseconds(50)
            options.connectTimeout = .seconds(2)
            return options
        }

        func admin() -> NATSOptions {
            var options = NATSOptions(servers: [server.url])
            options.credentials = .userPassword(user: "admin", password: "adminpass")
            options.connectTimeout = .seconds(2)
            return options
        }

        func stop() { server.stop() }
    }

    /// The `.publishFailed` statuses of `subject` (compared as bytes), as their error texts.
    func publishFailures(_ log: StatusLog, _ subject: String) -> [String] {
        log.values.compactMap { status -> String? in
            if case .publishFailed(let failed, let error) = status, failed.utf8.elementsEqual(subject.utf8) {
                error
            } else {
                nil
            }
        }
    }

    /// Sends `count` values to an at-most-once export of the denied `subject` and checks that each
    /// is counted once on that export, with the server's words.
    func checkAtMostOnceDenials(
        _ bridge: NATSBridge, _ log: StatusLog, subject: String, count: Int = 5, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let local = Event<Int>()
        let export = try bridge.export(local, to: subject)
        defer { export.cancel() }
        for value in 1...count { local.send(value) }
        bridge.flush(timeout: .seconds(5))
        XCTAssertTrue(
            waitUntil(timeout: 5) { export.failedPublishes >= count },
            "\(subject.debugDescription): \(export.failedPublishes) of \(count) counted; \(log.values.suffix(3))",
            file: file, line: line)
        bridge.flush(timeout: .seconds(5))
        XCTAssertEqual(export.failedPublishes, count, "each denial once", file: file, line: line)
        let failures = publishFailures(log, subject)
        XCTAssertEqual(failures.count, count, subject.debugDescription, file: file, line: line)
        XCTAssertTrue(
            failures.allSatisfy { $0.contains("Permissions Violation for Publish to") }, "\(failures)", file: file,
            line: line)
    }

    /// Imports of the denied `subject` throw `.authorizationFailed` with the server's words.
    func checkImportDenied(
        _ bridge: NATSBridge, subject: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try bridge.import(subject, into: Event<Int>()), file: file, line: line) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .authorizationFailed, "\(error)", file: file, line: line)
            XCTAssertTrue(
                "\(error)".contains("Permissions Violation for Subscription to"), "\(error)", file: file, line: line)
        }
    }

    /// `prefix` followed by `fill` repeated up to `quotedBytes` bytes as the server quotes them.
    func subject(_ prefix: String, quotedBytes: Int) -> String {
        prefix + String(repeating: "s", count: quotedBytes - NATSSubject.quotedSubjectBytes(prefix))
    }

    // MARK: Item 4: long subjects

    /// At the limit, every denial is attributed: at most once, at least once, and an import; one
    /// byte more (counted as the server quotes the subject) is refused before anything is sent.
    func testDenialsOfSubjectsAtTheLengthLimitReachTheirExportOrImport() throws {
        let permissions = try PermissionServer()
        defer { permissions.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(options: permissions.limited(), status: log.event)
        defer { bridge.close() }
        let longest = subject("perm.no.", quotedBytes: NATSSubject.maximumSubjectBytes)
        XCTAssertEqual(longest.utf8.count, NATSSubject.maximumSubjectBytes)
        try checkAtMostOnceDenials(bridge, log, subject: longest)
        checkImportDenied(bridge, subject: longest)
        // With characters the server escapes: U+200B is 3 bytes in UTF-8 and `\u200b`, 6, quoted.
        let escaped = subject("perm.no.\u{200B}\"", quotedBytes: NATSSubject.maximumSubjectBytes)
        XCTAssertEqual(NATSSubject.quotedSubjectBytes(escaped), NATSSubject.maximumSubjectBytes)
        try checkAtMostOnceDenials(bridge, log, subject: escaped)
        checkImportDenied(bridge, subject: escaped)
        // At least once, to a stream that stores the subject.
        let adminBridge = try NATSBridge(options: permissions.admin())
        defer { adminBridge.close() }
        let stream = NATSStream(name: "LONGPERM", subjects: ["perm.>"])
        try adminBridge.export(Event<Int>(), to: "perm.ok.created", delivery: .atLeastOnce(stream: stream))
        let local = Event<Int>()
        let stored = try bridge.export(local, to: longest, delivery: .atLeastOnce(stream: stream))
        for value in 1...5 { local.send(value) }
        XCTAssertTrue(waitUntil(timeout: 20) { bridge.pendingPublishes == 0 }, "refused, not pending for good")
        XCTAssertEqual(stored.refusedPublishes, 5)
        XCTAssertEqual(stored.failedPublishes, 5)

        // One byte over: refused at once, naming the limit.
        for over in [
            subject("perm.no.", quotedBytes: NATSSubject.maximumSubjectBytes + 1),
            subject("perm.no.\u{200B}", quotedBytes: NATSSubject.maximumSubjectBytes + 1),
        ] {
            XCTAssertLessThanOrEqual(over.utf8.count, NATSSubject.maximumSubjectBytes + 1)
            XCTAssertFalse(NATSSubject.isValidPublishSubject(over))
            XCTAssertThrowsError(try bridge.export(Event<Int>(), to: over)) { error in
                XCTAssertEqual((error as? NATSError)?.kind, .invalidSubject, "\(error)")
                XCTAssertTrue("\(error)".contains("\(NATSSubject.maximumSubjectBytes) bytes"), "\(error)")
            }
            XCTAssertThrowsError(try bridge.import(over, into: Event<Int>())) { error in
                XCTAssertEqual((error as? NATSError)?.kind, .invalidSubject, "\(error)")
            }
        }
        let keyed = KeyedEvent<String, Int>()
        let overKey = String(repeating: "k", count: NATSSubject.maximumSubjectBytes - "perm.no.".utf8.count + 1)
        XCTAssertThrowsError(try bridge.export(keyed, keys: [overKey], toPrefix: "perm.no")) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .invalidSubject, "\(error)")
        }
        XCTAssertFalse(log.values.contains { if case .error = $0 { true } else { false } }, "\(log.values)")
    }

    // MARK: Item 5: characters the server escapes

    static let escapedKeys = ["q\"q", "b\\b", "z\u{200B}z", "f\u{FEFF}f", "h\u{AD}h", "c\u{81}c", "p\u{E000}p"]

    func testDenialsOfSubjectsWithCharactersTheServerEscapesReachTheirExportOrImport() throws {
        let permissions = try PermissionServer()
        defer { permissions.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(options: permissions.limited(), status: log.event)
        defer { bridge.close() }
        for key in Self.escapedKeys {
            let subject = "perm.no." + NATSSubject.escapeToken(key)
            try checkAtMostOnceDenials(bridge, log, subject: subject, count: 3)
            checkImportDenied(bridge, subject: subject)
        }
        // A keyed export: each key's denials reach that key's publisher.
        let keyed = KeyedEvent<String, Int>()
        let export = try bridge.export(keyed, keys: Self.escapedKeys, toPrefix: "perm.no.keyed")
        for (index, key) in Self.escapedKeys.enumerated() {
            for value in 0...index { keyed.send(value, forKey: key) }
        }
        let expected = Self.escapedKeys.count * (Self.escapedKeys.count + 1) / 2
        XCTAssertTrue(waitUntil(timeout: 5) { export.failedPublishes == expected }, "\(export.failedPublishes)")
        for (index, key) in Self.escapedKeys.enumerated() {
            XCTAssertEqual(publishFailures(log, "perm.no.keyed." + NATSSubject.escapeToken(key)).count, index + 1)
        }
        // Permitted subjects with the same characters are imported and delivered.
        let remote = KeyedEvent<String, Int>()
        let received = Received<String>()
        let token = remote.forKeys(Self.escapedKeys).subscribe { key, value in received.append("\(key)=\(value)") }
        defer { token.cancel() }
        var options = permissions.limited()
        options.echo = true
        let echoing = try NATSBridge(options: options, status: log.event)
        defer { echoing.close() }
        for key in Self.escapedKeys {
            try echoing.import(prefix: "perm.ok", matching: NATSSubject.pattern(forKey: key)!, into: remote)
        }
        let allowed = KeyedEvent<String, Int>()
        try echoing.export(allowed, keys: Self.escapedKeys, toPrefix: "perm.ok")
        for key in Self.escapedKeys { allowed.send(1, forKey: key) }
        XCTAssertTrue(waitUntil(timeout: 5) { received.count == Self.escapedKeys.count }, "\(received.values)")
        XCTAssertFalse(log.values.contains { if case .error = $0 { true } else { false } }, "\(log.values)")
    }

    func testAtLeastOnceDenialsOfSubjectsWithCharactersTheServerEscapesAreRefused() throws {
        let permissions = try PermissionServer()
        defer { permissions.stop() }
        let adminBridge = try NATSBridge(options: permissions.admin())
        defer { adminBridge.close() }
        let stream = NATSStream(name: "ESCAPED", subjects: ["perm.>"])
        try adminBridge.export(Event<Int>(), to: "perm.ok.created", delivery: .atLeastOnce(stream: stream))
        let log = StatusLog()
        let bridge = try NATSBridge(options: permissions.limited(), status: log.event)
        defer { bridge.close() }
        let keyed = KeyedEvent<String, Int>()
        let export = try bridge.export(
            keyed, keys: Self.escapedKeys, toPrefix: "perm.no", delivery: .atLeastOnce(stream: stream))
        for key in Self.escapedKeys { keyed.send(1, forKey: key) }
        XCTAssertTrue(waitUntil(timeout: 20) { bridge.pendingPublishes == 0 }, "\(bridge.pendingPublishes) pending")
        XCTAssertEqual(export.refusedPublishes, Self.escapedKeys.count)
        XCTAssertEqual(refusedCount(log), Self.escapedKeys.count)
    }

    // MARK: Item 6: the export or import that sent it

    /// The server's denial names the subject only: each denial reaches the export whose message it
    /// was, among several exports of one subject on one bridge; a subject is not exported both at
    /// most once and at least once by one bridge (their messages go out apart).
    func testDenialsReachTheExportThatSentThem() throws {
        let permissions = try PermissionServer()
        defer { permissions.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(options: permissions.limited(), status: log.event)
        defer { bridge.close() }
        let adminBridge = try NATSBridge(options: permissions.admin())
        defer { adminBridge.close() }
        let stream = NATSStream(name: "SHARED", subjects: ["perm.>"])
        try adminBridge.export(Event<Int>(), to: "perm.ok.created", delivery: .atLeastOnce(stream: stream))

        // Sent before the second export joins, and after.
        let sending = Event<Int>()
        let sender = try bridge.export(sending, to: "perm.no.shared")
        for value in 1...4 { sending.send(value) }
        let silent = try bridge.export(Event<Int>(), to: "perm.no.shared")
        for value in 5...10 { sending.send(value) }
        XCTAssertTrue(waitUntil(timeout: 5) { sender.failedPublishes == 10 }, "\(sender.failedPublishes)")
        bridge.flush(timeout: .seconds(5))
        XCTAssertEqual(sender.failedPublishes, 10)
        XCTAssertEqual(silent.failedPublishes, 0, "charged to an export that sent nothing")
        // Three exports of one subject sending from three threads, each its own count.
        let events = [Event<Int>(), Event<Int>(), Event<Int>()]
        let exports = try events.map { try bridge.export($0, to: "perm.no.busy") }
        let counts = [300, 200, 1_000]
        DispatchQueue.concurrentPerform(iterations: 3) { index in
            for value in 0..<counts[index] { events[index].send(value) }
        }
        XCTAssertTrue(
            waitUntil(timeout: 10) { exports.map(\.failedPublishes).reduce(0, +) == counts.reduce(0, +) },
            "\(exports.map(\.failedPublishes))")
        bridge.flush(timeout: .seconds(5))
        XCTAssertEqual(exports.map(\.failedPublishes), counts)
        XCTAssertThrowsError(
            try bridge.export(Event<Int>(), to: "perm.no.shared", delivery: .atLeastOnce(stream: stream))
        ) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .invalidSubject, "\(error)")
            XCTAssertTrue("\(error)".contains("another export of this bridge"), "\(error)")
        }
        // Once the at-most-once exports are cancelled, the subject may be exported at least once, by
        // several exports, each refused its own events.
        sender.cancel()
        silent.cancel()
        let first = Event<Int>()
        let second = Event<Int>()
        let firstExport = try bridge.export(first, to: "perm.no.shared", delivery: .atLeastOnce(stream: stream))
        let secondExport = try bridge.export(second, to: "perm.no.shared", delivery: .atLeastOnce(stream: stream))
        XCTAssertThrowsError(try bridge.export(Event<Int>(), to: "perm.no.shared"))
        for value in 1...3 { first.send(value) }
        for value in 1...2 { second.send(value) }
        XCTAssertTrue(waitUntil(timeout: 20) { bridge.pendingPublishes == 0 }, "\(bridge.pendingPublishes) pending")
        XCTAssertEqual(firstExport.refusedPublishes, 3)
        XCTAssertEqual(secondExport.refusedPublishes, 2)

        // NFC allowed, NFD denied: equal under `==`, two subjects to the server.
        let composed = "perm.\u{E9}.v"
        let decomposed = "perm.e\u{301}.v"
        XCTAssertEqual(composed, decomposed)
        let allowed = Event<Int>()
        let denied = Event<Int>()
        let allowedExport = try bridge.export(allowed, to: composed)
        let deniedExport = try bridge.export(denied, to: decomposed)
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let receiver = try NATSBridge(options: permissions.admin())
        defer { receiver.close() }
        try receiver.import(composed, into: remote)
        for value in 1...10 {
            allowed.send(value)
            denied.send(value)
        }
        XCTAssertTrue(waitUntil(timeout: 5) { deniedExport.failedPublishes == 10 }, "\(deniedExport.failedPublishes)")
        XCTAssertTrue(waitUntil(timeout: 5) { received.count == 10 })
        bridge.flush(timeout: .seconds(5))
        XCTAssertEqual(allowedExport.failedPublishes, 0)
        XCTAssertEqual(deniedExport.failedPublishes, 10)
        XCTAssertEqual(publishFailures(log, decomposed).count, 10)
        XCTAssertEqual(publishFailures(log, composed).count, 0)
    }

    /// Exports sharing a permitted subject record the order of their messages only until the server
    /// has answered them: memory stays bounded however many are sent.
    func testTheOrderOfASharedSubjectsMessagesIsForgottenOnceAnswered() throws {
        let permissions = try PermissionServer()
        defer { permissions.stop() }
        let bridge = try NATSBridge(options: permissions.limited())
        defer { bridge.close() }
        let events = [Event<Int>(), Event<Int>()]
        let exports = try events.map { try bridge.export($0, to: "perm.ok.shared") }
        let senders = try XCTUnwrap(bridge.callbacks.denials.senders(of: "perm.ok.shared"))
        var largest = 0
        for value in 0..<20_000 {
            events[value % 2].send(value)
            if value % 100 == 0 { largest = max(largest, senders.recordedRunCount) }
        }
        bridge.flush(timeout: .seconds(5))
        XCTAssertTrue(
            waitUntil(timeout: 5) { senders.recordedRunCount <= 2 * SubjectSenders.pruneThreshold + 1 },
            "\(senders.recordedRunCount) runs recorded")
        XCTAssertLessThanOrEqual(largest, SubjectSenders.maximumRecordedRuns, "recorded runs while sending")
        XCTAssertEqual(exports.map(\.failedPublishes), [0, 0])
    }

    /// While cnats' callback thread is held up (a `status` observer that blocks), the server's
    /// answers are not taken in: the record stops growing at its maximum, says so once, and shrinks
    /// again once the thread goes on.
    func testTheRecordOfASharedSubjectStaysBoundedWhileTheCallbackThreadIsHeldUp() throws {
        let permissions = try PermissionServer()
        defer { permissions.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(options: permissions.limited(), status: log.event)
        defer { bridge.close() }
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holding = bridge.status.subscribe { status in
            if case .publishFailed("perm.no.hold", _) = status {
                held.signal()
                _ = release.wait(timeout: .now() + 20)
            }
        }
        defer { holding.cancel() }
        let denied = Event<Int>()
        try bridge.export(denied, to: "perm.no.hold")
        denied.send(1)
        XCTAssertEqual(held.wait(timeout: .now() + 5), .success)
        let events = [Event<Int>(), Event<Int>()]
        _ = try events.map { try bridge.export($0, to: "perm.ok.held") }
        let senders = try XCTUnwrap(bridge.callbacks.denials.senders(of: "perm.ok.held"))
        for value in 0..<(SubjectSenders.maximumRecordedRuns + 10_000) { events[value % 2].send(value) }
        XCTAssertEqual(senders.recordedRunCount, SubjectSenders.maximumRecordedRuns)
        release.signal()
        bridge.flush(timeout: .seconds(5))
        XCTAssertTrue(
            waitUntil(timeout: 10) { senders.recordedRunCount <= 2 * SubjectSenders.pruneThreshold + 1 },
            "\(senders.recordedRunCount) runs recorded")
        let overflows = log.count { if case .error(let text) = $0 { text.contains("perm.ok.held") } else { false } }
        XCTAssertEqual(overflows, 1, "\(log.values.suffix(3))")
    }

    /// Imports made while an export of the same bridge is being denied learn their own answer:
    /// each import of a denied subject throws, each import of a permitted one does not.
    func testImportsMadeWhileAnExportIsDeniedLearnTheirOwnAnswer() throws {
        let permissions = try PermissionServer()
        defer { permissions.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(options: permissions.limited(), status: log.event)
        defer { bridge.close() }
        let denied = Event<Int>()
        let deniedExport = try bridge.export(denied, to: "perm.no.flood")
        let running = LockedValue<Bool>(true)
        let sent = LockedCounter()
        let sender = JoinableThread {
            while running.value {
                denied.send(1)
                sent.increment()
                usleep(50)
            }
        }
        var accepted = 0
        var refusedPermitted = 0
        for round in 0..<50 {
            do {
                try bridge.import("perm.no.import\(round)", into: Event<Int>())
                accepted += 1
            } catch {
                XCTAssertEqual(error.kind, .authorizationFailed, "\(error)")
                XCTAssertTrue("\(error)".contains("perm.no.import\(round)"), "\(error)")
            }
            do {
                try bridge.import("perm.ok.import\(round)", into: Event<Int>())
            } catch {
                refusedPermitted += 1
            }
        }
        running.value = false
        sender.join()
        XCTAssertEqual(accepted, 0, "imports of denied subjects accepted")
        XCTAssertEqual(refusedPermitted, 0, "imports of permitted subjects refused")
        bridge.flush(timeout: .seconds(5))
        let total = sent.value
        XCTAssertTrue(
            waitUntil(timeout: 5) { deniedExport.failedPublishes == total }, "\(deniedExport.failedPublishes)")
        XCTAssertEqual(deniedExport.failedPublishes, total, "every publish denial on its export, none on an import")
    }

    // MARK: Item 7: permissions granted at run time

    func testAPermissionGrantedAtRunTimeIsNoLongerRefused() throws {
        let permissions = try PermissionServer()
        defer { permissions.stop() }
        let log = StatusLog()
        let bridge = try NATSBridge(options: permissions.limited(), status: log.event)
        defer { bridge.close() }
        checkImportDenied(bridge, subject: "perm.late.s")
        // Another connection of the same user publishes: denied until the grant.
        let publisher = try NATSBridge(options: permissions.limited())
        defer { publisher.close() }
        let local = Event<Int>()
        let export = try publisher.export(local, to: "perm.late.s")
        local.send(0)
        XCTAssertTrue(waitUntil(timeout: 5) { export.failedPublishes == 1 })

        XCTAssertTrue(try permissions.grant(["perm.late.>"], probe: "perm.late.probe"), "the reload took effect")
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        let imported = try bridge.import("perm.late.s", into: remote)
        for value in 1...5 { local.send(value) }
        XCTAssertTrue(waitUntil(timeout: 5) { received.count == 5 }, "\(received.values)")
        XCTAssertEqual(imported.deliveredCount, 5)
        publisher.flush(timeout: .seconds(5))
        XCTAssertEqual(export.failedPublishes, 1, "nothing refused after the grant")
        // And withdrawn again: the import's subscription is denied, with the server's words.
        XCTAssertTrue(try permissions.grant(["perm.other.>"], probe: "perm.other.probe"))
        XCTAssertTrue(
            waitUntil(timeout: 5) {
                log.values.contains {
                    if case .error(let text) = $0 { text.contains("Subscription to \"perm.late.s\"") } else { false }
                }
            }, "\(log.values)")
    }
}
