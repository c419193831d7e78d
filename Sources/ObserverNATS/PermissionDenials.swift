import CNATS
import Foundation
import ObserverSwift

/// Takes the server's permission denials (`-ERR 'Permissions Violation for Publish to "s"'`,
/// `... for Subscription to "s"'`, which cnats reports as `NATS_NOT_PERMITTED` with the text in
/// the connection's last error) to what they belong to: a denied at-most-once publish is
/// counted as failed on the export publishing that subject and reported as
/// ``NATSStatus/publishFailed(subject:error:)``; a denied at-least-once publish makes the
/// JetStream context give up that subject's messages as refused; a denied subscription is
/// remembered for the import that is being made (which then throws).
///
/// It holds its publishers and the JetStream context strongly, and only while they can
/// publish: an export takes its publishers out when it stops (cancelled, or stopped by its
/// bridge's close) and the bridge takes its JetStream context out when it closes. Nothing
/// here refers back to the table, so an entry a failed export leaves behind is released
/// with the table, when cnats releases the connection's callbacks after closing it.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class PermissionDenials: Sendable {
    /// At-most-once publishers by subject, in the order they were registered.
    private let publishers = Locked<[String: [ExportedPublisher]]>([:])
    private let jetStream = Locked<JetStreamContext?>(nil)

    /// What the server said, split into the operation and the subject.
    struct Denial: Equatable {
        enum Operation { case publish, subscription }
        var operation: Operation
        var subject: String
        var text: String
    }

    func register(_ publisher: ExportedPublisher) {
        publishers.withLock { $0[publisher.subject, default: []].append(publisher) }
    }

    /// Takes `publisher` out: denials of its subject no longer reach it. No-op when it is not in.
    func unregister(_ publisher: ExportedPublisher) {
        publishers.withLock { publishers in
            guard var list = publishers[publisher.subject] else { return }
            list.removeAll { $0 === publisher }
            publishers[publisher.subject] = list.isEmpty ? nil : list
        }
    }

    func register(_ context: JetStreamContext) {
        jetStream.withLock { $0 = context }
    }

    /// Takes `context` out, when its connection is closed. No-op when another one is in.
    func unregister(_ context: JetStreamContext) {
        jetStream.withLock { if $0 === context { $0 = nil } }
    }

    /// How many publishers of `subject` are registered now (for tests).
    func registeredPublisherCount(of subject: String) -> Int {
        publishers.withLock { $0[subject]?.count ?? 0 }
    }

    /// Whether a JetStream context is registered now (for tests).
    var hasJetStream: Bool { jetStream.withLock { $0 != nil } }

    /// Handles the denial cnats reported on `connection`; false when its text names no
    /// subject to take it to (the caller then reports it as an ``NATSStatus/error(_:)``).
    func handle(_ connection: OpaquePointer?, status: Event<NATSStatus>) -> Bool {
        guard let connection, let denial = Self.reportedDenial(connection) else { return false }
        switch denial.operation {
        case .publish:
            let publisher = publishers.withLock { $0[denial.subject]?.first }
            if let publisher {
                publisher.reportFailure(denial.text)
                return true
            }
            if let context = jetStream.withLock({ $0 }), context.publishes(to: denial.subject) {
                context.noteDenied(denial.subject, reason: denial.text)
                return true
            }
            return false
        case .subscription:
            // The import being made throws (see `NATSBridge.subscribe`); a later denial of an
            // existing import's subscription (permissions changed, after a reconnect) is
            // reported with the server's words, which name the subject.
            status.send(.error(denial.text))
            return true
        }
    }

    /// The denial cnats reports on its callback thread now: cnats puts each denial's own text in
    /// that thread's last error before it calls the error handler (the connection's last error
    /// is the newest denial's, which is another one when several arrive together). Falls back
    /// to the connection's last error.
    static func reportedDenial(_ connection: OpaquePointer) -> Denial? {
        var status = NATS_OK
        if let text = nats_GetLastError(&status), status == NATS_NOT_PERMITTED,
            let denial = parse(String(cString: text))
        {
            return denial
        }
        return lastDenial(connection)
    }

    /// The denial in `connection`'s last error, if its last error is one.
    static func lastDenial(_ connection: OpaquePointer) -> Denial? {
        var text: UnsafePointer<CChar>?
        guard natsConnection_GetLastError(connection, &text) == NATS_NOT_PERMITTED, let text else { return nil }
        return parse(String(cString: text))
    }

    /// `Permissions Violation for Publish to "s"` or `... for Subscription to "s"` (optionally
    /// followed by ` using queue "q"`), in any case, as the server words it.
    static func parse(_ text: String) -> Denial? {
        let lowered = text.lowercased()
        let operation: Denial.Operation
        let marker: String
        if let range = lowered.range(of: "permissions violation for publish to \"") {
            operation = .publish
            marker = String(text[range.upperBound...])
        } else if let range = lowered.range(of: "permissions violation for subscription to \"") {
            operation = .subscription
            marker = String(text[range.upperBound...])
        } else {
            return nil
        }
        guard let end = marker.firstIndex(of: "\"") else { return nil }
        let subject = String(marker[..<end])
        guard !subject.isEmpty else { return nil }
        return Denial(operation: operation, subject: subject, text: text.trimmingCharacters(in: .whitespaces))
    }
}
