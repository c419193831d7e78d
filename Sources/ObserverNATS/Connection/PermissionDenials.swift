import CNATS
import Foundation
import ObserverSwift

/// A subject as the server compares it: its UTF-8 bytes. Swift's `String` `==` compares canonically
/// equivalent strings (an NFD and an NFC spelling) as equal; the server never does.
struct SubjectBytes: Hashable, Sendable {
    let bytes: [UInt8]

    init(_ subject: String) { bytes = Array(subject.utf8) }
    init(bytes: [UInt8]) { self.bytes = bytes }
}

/// Takes the server's permission denials (`-ERR 'Permissions Violation for Publish to "s"'`,
/// `... for Subscription to "s"'`, which cnats reports as `NATS_NOT_PERMITTED` to the error
/// handler, each with its own text) to what they belong to, by the subject the text names
/// (Go-quoted by the server, unquoted here and compared as bytes) and the operation:
/// - a denied at-most-once publish is counted as failed on the export publishing that subject
///   and reported as ``NATSStatus/publishFailed(subject:error:)``;
/// - a denied at-least-once publish makes the JetStream context give up that subject's messages
///   as refused;
/// - a denied subscription is given to the import being made of that subject (which then throws);
/// - anything else is reported as an ``NATSStatus/error(_:)`` with the server's words.
///
/// Several at-most-once exports of one subject share a ``SubjectSenders``, which knows whose
/// message each denial is; several at-least-once exports of one subject share the JetStream
/// context, which refuses their denied messages one by one. One bridge does not export a subject
/// both ways (``register(_:)`` refuses it). Subjects are at most ``NATSSubject/maximumSubjectBytes``
/// bytes as the server quotes them, so the text cnats keeps (255 bytes) names every one whole.
///
/// It holds its publishers and the JetStream context strongly, and only while they can
/// publish: an export takes its publishers out when it stops (cancelled, or stopped by its
/// bridge's close) and the bridge takes its JetStream context out when it closes. Nothing
/// here refers back to the table, so an entry a failed export leaves behind is released
/// with the table, when cnats releases the connection's callbacks after closing it.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class PermissionDenials: Sendable {
    /// What the table holds, under one lock.
    private struct Table {
        /// At-most-once publishers by subject.
        var publishers: [SubjectBytes: SubjectSenders] = [:]
        /// Subjects at-least-once exports publish through the JetStream context (kept while the
        /// context lives: its retry thread republishes a cancelled export's pending messages).
        var atLeastOnceSubjects: Set<SubjectBytes> = []
        var jetStream: JetStreamContext?
        /// Imports being made, by the subject they subscribe, oldest first.
        var subscribing: [SubjectBytes: [SubscriptionAttempt]] = [:]
    }

    /// The callback markers, under a lock of their own: a ``SubjectSenders`` queues one while it
    /// holds its lock, which `table`'s holders may take (never the other way round).
    private struct Markers {
        /// The number of the last callback marker posted, and of the last one the handler saw.
        var posted: UInt64 = 0
        var seen: UInt64 = 0
        /// What to do when the handler sees a marker, by its number.
        var actions: [UInt64: @Sendable () -> Void] = [:]
        /// What cnats passes its callbacks (the connection's `ConnectionCallbacks`), which owns this.
        weak var owner: AnyObject?
        /// The owner, kept alive by each marker queued until the handler sees it: cnats calls the
        /// handler for a marker even when it comes after the connection's closed callback, which
        /// gives up cnats' own reference.
        var ownerKeptFor: [UInt64: AnyObject] = [:]
    }

    private let table = Locked(Table())
    private let markers = Locked(Markers())
    /// Signalled when the handler sees a marker or gives a denial to a subscription attempt.
    private let handled = NSCondition()

    /// What the server said, split into the operation and the subject.
    struct Denial: Equatable {
        enum Operation { case publish, subscription }
        var operation: Operation
        /// The subject's bytes, unquoted; nil when the text ends before the subject's closing quote.
        var subject: [UInt8]?
        var text: String
    }

    /// An import's subscription between its `SUB` and the end of the check that follows it.
    final class SubscriptionAttempt: Sendable {
        let subject: SubjectBytes
        /// The server's words, once a denial of this subscription arrived.
        let denial = Locked<String?>(nil)

        init(subject: SubjectBytes) { self.subject = subject }
    }

    // MARK: Registration

    /// Registers an at-most-once publisher, before it publishes; returns why it cannot be (an
    /// at-least-once export of the bridge publishes its subject), or nil.
    func register(_ publisher: ExportedPublisher) -> String? {
        let subject = SubjectBytes(publisher.subject)
        let senders = table.withLock { table -> SubjectSenders? in
            if table.atLeastOnceSubjects.contains(subject) { return nil }
            if let senders = table.publishers[subject] { return senders }
            let senders = SubjectSenders(denials: self)
            table.publishers[subject] = senders
            return senders
        }
        guard let senders else { return Self.sharedSubjectProblem(publisher.subject, other: "at least once") }
        publisher.senders = senders
        senders.add(publisher)
        return nil
    }

    /// Registers the subject of an at-least-once export; returns why it cannot be (an at-most-once
    /// export of the bridge publishes it), or nil.
    func registerAtLeastOnce(_ subject: String) -> String? {
        let bytes = SubjectBytes(subject)
        return table.withLock { table -> String? in
            if let senders = table.publishers[bytes], senders.publisherCount > 0 {
                return Self.sharedSubjectProblem(subject, other: "at most once")
            }
            table.atLeastOnceSubjects.insert(bytes)
            return nil
        }
    }

    static func sharedSubjectProblem(_ subject: String, other: String) -> String {
        "another export of this bridge publishes \"\(subject)\" \(other): the server's permission denials name "
            + "only the subject, and at-least-once messages are sent apart from at-most-once ones, so a bridge "
            + "exports a subject either at most once or at least once (cancel the other exports first, or export "
            + "from a second bridge)"
    }

    /// Takes `publisher` out: denials of its subject no longer reach it once no other export of
    /// the bridge publishes the subject. No-op when it is not in.
    func unregister(_ publisher: ExportedPublisher) {
        let subject = SubjectBytes(publisher.subject)
        table.withLock { table in
            guard let senders = table.publishers[subject] else { return }
            if senders.remove(publisher) { table.publishers[subject] = nil }
        }
    }

    func register(_ context: JetStreamContext) {
        table.withLock { $0.jetStream = context }
    }

    /// Takes `context` out, when its connection is closed. No-op when another one is in.
    func unregister(_ context: JetStreamContext) {
        table.withLock { table in
            if table.jetStream === context {
                table.jetStream = nil
                table.atLeastOnceSubjects = []
            }
        }
    }

    /// How many publishers of `subject` are registered now (for tests).
    func registeredPublisherCount(of subject: String) -> Int {
        table.withLock { $0.publishers[SubjectBytes(subject)] }?.publisherCount ?? 0
    }

    /// The publishers of `subject` (for tests).
    func senders(of subject: String) -> SubjectSenders? {
        table.withLock { $0.publishers[SubjectBytes(subject)] }
    }

    /// Sets what cnats passes the callbacks, kept alive while a marker is queued.
    func setOwner(_ owner: AnyObject) {
        markers.withLock { $0.owner = owner }
    }

    /// Whether a JetStream context is registered now (for tests).
    var hasJetStream: Bool { table.withLock { $0.jetStream != nil } }

    // MARK: Subscriptions

    /// Starts waiting for a denial of a subscription to `subject`: call before subscribing.
    func beginSubscription(_ subject: String) -> SubscriptionAttempt {
        let attempt = SubscriptionAttempt(subject: SubjectBytes(subject))
        table.withLock { $0.subscribing[attempt.subject, default: []].append(attempt) }
        return attempt
    }

    /// The server's words if it denied `attempt`'s subscription. Call after a flush of the
    /// connection has returned (the server answers a subscription it refuses before the flush's
    /// PONG, so cnats had queued the denial for its callback thread by then): this posts a marker
    /// behind it on that thread and waits, until `deadline`, for the handler to reach the marker.
    /// Without `connection` (the subscription failed, or this runs on cnats' callback thread),
    /// returns what arrived so far without waiting.
    func endSubscription(_ attempt: SubscriptionAttempt, connection: OpaquePointer?, deadline: Date) -> String? {
        defer {
            table.withLock { table in
                table.subscribing[attempt.subject]?.removeAll { $0 === attempt }
                if table.subscribing[attempt.subject]?.isEmpty == true { table.subscribing[attempt.subject] = nil }
            }
        }
        if let denial = attempt.denial.withLock({ $0 }) { return denial }
        guard let connection, let marker = postMarker(connection) else { return attempt.denial.withLock { $0 } }
        handled.lock()
        defer { handled.unlock() }
        while attempt.denial.withLock({ $0 }) == nil, markers.withLock({ $0.seen }) < marker, Date() < deadline {
            _ = handled.wait(until: deadline)
        }
        return attempt.denial.withLock { $0 }
    }

    /// cnats' function that queues an error callback on its callback thread, which runs callbacks
    /// in the order they were queued. Not in cnats' headers: looked up by name, nil when absent.
    private typealias PostErrorHandler =
        @convention(c) (
            OpaquePointer?, OpaquePointer?, natsStatus, UnsafeMutablePointer<CChar>?
        ) -> Void

    private static let postErrorHandler: PostErrorHandler? = {
        guard let program = dlopen(nil, RTLD_NOW), let symbol = dlsym(program, "natsAsyncCb_PostErrHandler") else {
            return nil
        }
        return unsafeBitCast(symbol, to: PostErrorHandler.self)
    }()

    /// Whether markers can be queued (cnats' function was found). Without them an import does not
    /// wait for its denial after the flush, and several exports of one subject are not told apart
    /// (denials go to the first).
    static var canQueueMarkers: Bool { postErrorHandler != nil }

    /// The text of a marker: the handler recognises it and takes it to no one.
    static let markerPrefix = "ObserverNATS callback marker "

    /// Queues a marker behind every callback cnats has queued for `connection` so far, which runs
    /// `action` (on cnats' callback thread) when the handler sees it; returns its number, or nil
    /// when cnats' function is absent.
    func postMarker(_ connection: OpaquePointer, then action: (@Sendable () -> Void)? = nil) -> UInt64? {
        guard let post = Self.postErrorHandler else { return nil }
        let number = markers.withLock { markers -> UInt64? in
            guard let owner = markers.owner else { return nil }
            markers.posted += 1
            markers.ownerKeptFor[markers.posted] = owner
            if let action { markers.actions[markers.posted] = action }
            return markers.posted
        }
        guard let number else { return nil }
        // cnats frees the text after the callback.
        post(connection, nil, NATS_ERR, strdup(Self.markerPrefix + String(number)))
        return number
    }

    // MARK: Handling

    /// Handles an error cnats reported with `text` (the callback thread's own last error):
    /// returns false when it is neither a marker nor a denial taken to what it belongs to (the
    /// caller then reports it as an ``NATSStatus/error(_:)``).
    func handle(_ text: String?, status: Event<NATSStatus>) -> Bool {
        guard let text else { return false }
        if text.hasPrefix(Self.markerPrefix), let number = UInt64(text.dropFirst(Self.markerPrefix.count)) {
            let (action, owner) = markers.withLock { markers in
                markers.seen = max(markers.seen, number)
                return (markers.actions.removeValue(forKey: number), markers.ownerKeptFor.removeValue(forKey: number))
            }
            action?()
            handled.lock()
            handled.broadcast()
            handled.unlock()
            // The last use: the owner may go with it (cnats touches it no more for this callback).
            withExtendedLifetime(owner) {}
            return true
        }
        guard let denial = Self.parse(text), let subject = denial.subject else { return false }
        let bytes = SubjectBytes(bytes: subject)
        switch denial.operation {
        case .publish:
            let (senders, context) = table.withLock { table -> (SubjectSenders?, JetStreamContext?) in
                if let senders = table.publishers[bytes] { return (senders, nil) }
                return (nil, table.atLeastOnceSubjects.contains(bytes) ? table.jetStream : nil)
            }
            let publisher = senders?.takeDenied()
            if let publisher {
                publisher.reportFailure(denial.text)
                return true
            }
            if let context {
                context.noteDenied(String(decoding: subject, as: UTF8.self), reason: denial.text)
                return true
            }
            return false
        case .subscription:
            // The oldest import being made of this subject that has no denial yet throws; a
            // later denial of an existing import's subscription (permissions changed, after a
            // reconnect or a reload) is reported with the server's words, which name the subject.
            let attempt = table.withLock { table in
                table.subscribing[bytes]?.first { $0.denial.withLock { $0 == nil } }
            }
            guard let attempt else { return false }
            attempt.denial.withLock { $0 = denial.text }
            handled.lock()
            handled.broadcast()
            handled.unlock()
            return true
        }
    }

    /// The text cnats gives the error handler now, on its callback thread: cnats puts each
    /// error's own text in that thread's last error before it calls the handler.
    static func callbackText() -> String? {
        var status = NATS_OK
        guard let text = nats_GetLastError(&status), status != NATS_OK else { return nil }
        return String(cString: text)
    }

    // MARK: Parsing

    /// `Permissions Violation for Publish to "s"` or `... for Subscription to "s"` (optionally
    /// followed by ` using queue "q"` or ` (sid "n")`), in any case of the words, with the subject
    /// quoted as Go's `%q` quotes it. The subject is nil when the text ends before its closing quote.
    static func parse(_ text: String) -> Denial? {
        let bytes = Array(text.utf8)
        let operation: Denial.Operation
        let start: Int
        if let end = endOfMarker("permissions violation for publish to \"", in: bytes) {
            operation = .publish
            start = end
        } else if let end = endOfMarker("permissions violation for subscription to \"", in: bytes) {
            operation = .subscription
            start = end
        } else {
            return nil
        }
        let subject = GoQuoted.unquote(bytes[start...])
        if let subject, subject.isEmpty { return nil }
        return Denial(
            operation: operation, subject: subject, text: text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The index after the first occurrence of `marker` (ASCII, compared without case) in `bytes`.
    private static func endOfMarker(_ marker: StaticString, in bytes: [UInt8]) -> Int? {
        marker.withUTF8Buffer { marker -> Int? in
            guard bytes.count >= marker.count else { return nil }
            for start in 0...(bytes.count - marker.count) {
                var index = 0
                while index < marker.count, lowercased(bytes[start + index]) == marker[index] { index += 1 }
                if index == marker.count { return start + marker.count }
            }
            return nil
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}

/// The inverse of Go's `strconv.Quote` (what `%q` writes), as `strconv.Unquote` reads a
/// double-quoted string: `\a \b \f \n \r \t \v \\ \"`, `\xHH` (a byte), `\uHHHH` and
/// `\UHHHHHHHH` (a Unicode scalar, in UTF-8), `\OOO` (an octal byte); every other byte as it is.
enum GoQuoted {
    /// The bytes of the quoted text that starts right after an opening `"` in `text`, up to its
    /// closing `"`; nil when `text` ends first (cut off) or has an escape Go would not read.
    static func unquote(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        var index = text.startIndex
        func hex(_ count: Int) -> UInt32? {
            guard text.endIndex - index >= count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<count {
                guard let digit = hexValue(text[index]) else { return nil }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }
        while index < text.endIndex {
            let byte = text[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return result
            case UInt8(ascii: "\n"):
                return nil
            case UInt8(ascii: "\\"):
                guard index < text.endIndex else { return nil }
                let escape = text[index]
                index += 1
                switch escape {
                case UInt8(ascii: "a"): result.append(0x07)
                case UInt8(ascii: "b"): result.append(0x08)
                case UInt8(ascii: "f"): result.append(0x0C)
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "r"): result.append(0x0D)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "v"): result.append(0x0B)
                case UInt8(ascii: "\\"), UInt8(ascii: "\""): result.append(escape)
                case UInt8(ascii: "x"):
                    guard let value = hex(2) else { return nil }
                    result.append(UInt8(value))
                case UInt8(ascii: "u"), UInt8(ascii: "U"):
                    guard let value = hex(escape == UInt8(ascii: "u") ? 4 : 8), let scalar = Unicode.Scalar(value)
                    else { return nil }
                    result.append(contentsOf: String(scalar).utf8)
                case UInt8(ascii: "0")...UInt8(ascii: "7"):
                    var value = UInt32(escape - UInt8(ascii: "0"))
                    for _ in 0..<2 {
                        guard index < text.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(text[index])
                        else { return nil }
                        value = value << 3 | UInt32(text[index] - UInt8(ascii: "0"))
                        index += 1
                    }
                    guard value <= 0xFF else { return nil }
                    result.append(UInt8(value))
                default:
                    return nil
                }
            default:
                result.append(byte)
            }
        }
        return nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
