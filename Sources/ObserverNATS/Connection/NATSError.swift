import CNATS
import Foundation

/// Why a bridge operation failed.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public struct NATSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, in the bridge's words.
    ///
    /// This enum may gain cases: kinds are added in minor releases, as ``NATSStatus`` cases are.
    /// End a `switch` over a kind with `@unknown default:` or `default:`; one that lists every
    /// kind and ends with neither stops compiling when a kind is added.
    public enum Kind: Sendable, Equatable {
        /// No server could be reached within the connect timeout.
        case unreachable
        /// The server refused the credentials, or an operation they do not permit (an import of
        /// a subject the user may not subscribe to).
        case authorizationFailed
        /// A subject, prefix, key, pattern, key-value bucket or key-value key NATS cannot use.
        case invalidSubject
        /// An option the bridge or cnats refused: a server URL that is not one, a stream or durable
        /// consumer name the server would refuse, a TLS file that does not load.
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
    /// What was wrong, in the bridge's words: what it was doing, and the reason (cnats' or the
    /// server's, without cnats' source locations).
    public let message: String
    /// cnats' status code (`natsStatus`), 0 when the error is the bridge's own.
    public let status: Int32
    /// cnats' own last error text, as cnats wrote it (with its source location, such as
    /// `(conn.c:2088)`), for a bug report; nil when the error is the bridge's own.
    public let detail: String?

    public var description: String { message }

    init(_ kind: Kind, _ message: String, status: Int32 = 0, detail: String? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
        self.detail = detail
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
        var reason = ""
        var detail: String?
        if let last = nats_GetLastError(nil) {
            let lastText = String(cString: last)
            detail = lastText.isEmpty ? nil : lastText
            // cnats prints OpenSSL's reason with `%s`, which glibc renders "(null)" when OpenSSL
            // gave none: drop it rather than show it.
            var shown = withoutSourceLocation(lastText)
            if shown.hasSuffix("(null)") {
                shown = String(shown.dropLast("(null)".count))
                while shown.hasSuffix(" ") || shown.hasSuffix(":") { shown.removeLast() }
            }
            if !shown.isEmpty && shown != text { reason = " (\(shown))" }
        }
        return NATSError(
            kind, "\(what): \(text)\(reason)", status: Int32(bitPattern: status.rawValue), detail: detail)
    }

    /// `text` without cnats' leading source locations: `(conn.c:2088): No server` is `No server`.
    static func withoutSourceLocation(_ text: String) -> String {
        var rest = Substring(text)
        while rest.hasPrefix("("), let close = rest.firstIndex(of: ")") {
            let location = rest[rest.index(after: rest.startIndex)..<close]
            let parts = location.split(separator: ":")
            guard parts.count == 2, parts[0].hasSuffix(".c"), parts[1].allSatisfy(\.isNumber) else { break }
            rest = rest[rest.index(after: close)...].drop { $0 == ":" || $0 == " " }
        }
        return String(rest)
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

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSError {
    var asJetStream: NATSError {
        kind == .client ? NATSError(.jetStream, message, status: status, detail: detail) : self
    }
}
