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
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class PermissionDenials: Sendable {
    struct PublisherReference {
        weak var publisher: ExportedPublisher?
    }

    struct JetStreamReference {
        weak var context: JetStreamContext?
    }

    /// At-most-once publishers by subject.
    private let publishers = LockedState<[String: [PublisherReference]]>([:])
    private let jetStream = LockedState(JetStreamReference())

    /// What the server said, split into the operation and the subject.
    struct Denial: Equatable {
        enum Operation { case publish, subscription }
        var operation: Operation
        var subject: String
        var text: String
    }

    func register(_ publisher: ExportedPublisher) {
        publishers.withLock { publishers in
            var list = publishers[publisher.subject, default: []].filter { $0.publisher != nil }
            list.append(PublisherReference(publisher: publisher))
            publishers[publisher.subject] = list
        }
    }

    func register(_ context: JetStreamContext) {
        jetStream.withLock { $0.context = context }
    }

    /// Drops every registration: called once the connection is closed, when no denial can
    /// arrive any more. The connection's callbacks outlive the bridge until cnats' last
    /// callback runs, and their weak references would keep the publishers' side tables alive
    /// until then.
    func removeAll() {
        publishers.withLock { $0 = [:] }
        jetStream.withLock { $0.context = nil }
    }

    /// Handles the denial cnats reported on `connection`; false when its text names no
    /// subject to take it to (the caller then reports it as an ``NATSStatus/error(_:)``).
    func handle(_ connection: OpaquePointer?, status: Event<NATSStatus>) -> Bool {
        guard let connection, let denial = Self.reportedDenial(connection) else { return false }
        switch denial.operation {
        case .publish:
            let publisher = publishers.withLock { publishers -> ExportedPublisher? in
                publishers[denial.subject]?.lazy.compactMap(\.publisher).first
            }
            if let publisher {
                publisher.reportFailure(denial.text)
                return true
            }
            if let context = jetStream.withLock({ $0.context }), context.publishes(to: denial.subject) {
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
