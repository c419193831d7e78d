import CNATS
import Foundation

/// Why a bridge operation failed.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public struct NATSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, in the bridge's words.
    ///
    /// Kinds are added in minor releases, as ``NATSStatus`` cases are: end a `switch` over a
    /// kind with `@unknown default:` or `default:`.
    public enum Kind: Sendable, Equatable {
        /// No server could be reached within the connect timeout.
        case unreachable
        /// The server refused the credentials, or an operation they do not permit (an import of
        /// a subject the user may not subscribe to).
        case authorizationFailed
        /// A subject, prefix, key or pattern NATS cannot use.
        case invalidSubject
        /// An option cnats refused (for instance a TLS file that does not load).
        case invalidOption
        /// The bridge was closed.
        case closed
        /// A JetStream or key-value request failed.
        case jetStream
        /// TLS failed at connect: the handshake, a server certificate the client does not trust
        /// (or a host name it does not carry), or TLS required by one side and not the other.
        case tls
        /// Anything else cnats reported.
        case client
    }

    public let kind: Kind
    /// A sentence for humans, including cnats' own error text when there is one.
    public let message: String
    /// cnats' status code (`natsStatus`), 0 when the error is the bridge's own.
    public let status: Int32

    public var description: String { message }

    init(_ kind: Kind, _ message: String, status: Int32 = 0) {
        self.kind = kind
        self.message = message
        self.status = status
    }

    /// An error from a cnats status; nil for `NATS_OK`.
    static func from(_ status: natsStatus, _ what: String) -> NATSError? {
        if status == NATS_OK { return nil }
        let text = String(cString: natsStatus_GetText(status))
        let kind: Kind
        switch status {
        case NATS_NO_SERVER, NATS_TIMEOUT: kind = .unreachable
        case NATS_CONNECTION_AUTH_FAILED, NATS_NOT_PERMITTED: kind = .authorizationFailed
        case NATS_INVALID_SUBJECT: kind = .invalidSubject
        case NATS_CONNECTION_CLOSED: kind = .closed
        case NATS_SSL_ERROR, NATS_SECURE_CONNECTION_WANTED, NATS_SECURE_CONNECTION_REQUIRED: kind = .tls
        default: kind = .client
        }
        var detail = ""
        if let last = nats_GetLastError(nil) {
            // cnats prints OpenSSL's reason with `%s`, which glibc renders "(null)" when OpenSSL
            // gave none: drop it rather than show it.
            var lastText = String(cString: last)
            if lastText.hasSuffix("(null)") {
                lastText = String(lastText.dropLast("(null)".count))
                while lastText.hasSuffix(" ") || lastText.hasSuffix(":") { lastText.removeLast() }
            }
            if !lastText.isEmpty && lastText != text { detail = " (\(lastText))" }
        }
        return NATSError(kind, "\(what): \(text)\(detail)", status: Int32(bitPattern: status.rawValue))
    }

    /// Throws ``Kind/invalidOption`` naming `path` and the system's reason when the file at
    /// `path` cannot be opened for reading (cnats' own error for it ends in OpenSSL's empty reason).
    static func checkReadable(_ path: String, _ what: String) throws(NATSError) {
        let descriptor = open(path, O_RDONLY)
        if descriptor >= 0 {
            close(descriptor)
            return
        }
        let reason = String(cString: strerror(errno))
        throw NATSError(.invalidOption, "TLS: cannot read \(what) \(path): \(reason)")
    }

    static func check(_ status: natsStatus, _ what: @autoclosure () -> String) throws(NATSError) {
        if let error = from(status, what()) { throw error }
    }
}
