/// How a ``NATSBridge`` connects. Every field has a default; the defaults
/// connect to `nats://127.0.0.1:4222`.
///
/// ```swift
/// var options = NATSOptions(servers: ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222"])
/// options.name = "pricing-service"
/// options.credentials = .userPassword(user: "pricing", password: "s3cret")
/// options.latency = .immediate
/// options.connectTimeout = .seconds(2)
/// ```
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public struct NATSOptions: Sendable, Equatable {
    /// Server URLs (`nats://host:port`, `tls://host:port`; without a scheme, `nats://`; without a
    /// port, 4222; `user:password@` before the host is allowed). The client tries them in order,
    /// fails over to the others, and reconnects to them. A URL that is none of these is refused
    /// by ``NATSBridge/init(options:status:)`` with ``NATSError/Kind/invalidOption`` and a
    /// message that starts with "not a valid NATS URL".
    public var servers: [String]
    /// The connection name the server shows in its monitoring.
    public var name: String?
    /// How the client authenticates.
    public var credentials: Credentials
    /// TLS settings; nil means plain TCP unless a URL says `tls://`.
    public var tls: TLS?
    /// Batched (the client's flusher sends within about 1 ms, the fastest for
    /// throughput) or immediate (each publish is written at once, the lowest latency).
    public var latency: Latency
    /// How many messages and bytes may wait for each import's handlers before the
    /// client drops new ones and reports ``NATSStatus/slowConsumer(subject:dropped:)``.
    public var pendingLimits: PendingLimits
    /// Whether this connection receives what it publishes itself. Off by default,
    /// so that a process importing the subjects it exports sees its own events once.
    public var echo: Bool
    /// How long connecting may take before ``NATSBridge/init(options:status:)`` throws.
    public var connectTimeout: Duration
    /// The pause between reconnect attempts to the same server.
    public var reconnectWait: Duration
    /// Reconnect attempts per server before the connection closes; nil means forever.
    public var maxReconnectAttempts: Int?
    /// Bytes of publishes kept while reconnecting (sent after reconnecting). At-least-once
    /// publishes that do not fit wait in the bridge's retry queue instead (see
    /// ``maxPendingPublishes``).
    public var reconnectBufferBytes: Int
    /// At-least-once: messages (a batch is one) that may be unacknowledged at once (in flight or waiting to
    /// be republished); a publish beyond it fails at once and is reported as
    /// ``NATSStatus/publishFailed(subject:error:)``. Bounds the bridge's memory during an outage.
    public var maxPendingPublishes: Int
    /// At-least-once imports: the idle heartbeat their consumers send when they have nothing
    /// to deliver. Three intervals without a message or a heartbeat while connected are a
    /// stall (see ``NATSStatus/consumerStalled(subject:durable:)``).
    public var consumerHeartbeat: Duration
    /// Several events per NATS message, for throughput: off by default (one message per event).
    /// See ``Batching``.
    public var batching: Batching

    public init(
        servers: [String] = ["nats://127.0.0.1:4222"], name: String? = nil, credentials: Credentials = .none,
        tls: TLS? = nil, latency: Latency = .batched, pendingLimits: PendingLimits = .init(), echo: Bool = false,
        connectTimeout: Duration = .seconds(2), reconnectWait: Duration = .milliseconds(250),
        maxReconnectAttempts: Int? = nil, reconnectBufferBytes: Int = 8 * 1024 * 1024,
        maxPendingPublishes: Int = 1 << 20, consumerHeartbeat: Duration = .seconds(2), batching: Batching = .off
    ) {
        self.servers = servers
        self.name = name
        self.credentials = credentials
        self.tls = tls
        self.latency = latency
        self.pendingLimits = pendingLimits
        self.echo = echo
        self.connectTimeout = connectTimeout
        self.reconnectWait = reconnectWait
        self.maxReconnectAttempts = maxReconnectAttempts
        self.reconnectBufferBytes = reconnectBufferBytes
        self.maxPendingPublishes = maxPendingPublishes
        self.consumerHeartbeat = consumerHeartbeat
        self.batching = batching
    }

    /// Whether exports put several events in one NATS message. Imports need no option: they
    /// accept single and batch frames alike.
    public enum Batching: Sendable, Equatable {
        /// One message per event (the default).
        case off
        /// Each exported subject collects up to `max` events (2–65 536) in one message, sent when
        /// it is full, at the latest `linger` (above 0, at most 10 s) after its first event, and by
        /// ``NATSBridge/flush(timeout:)``, ``NATSExport/cancel()`` and ``NATSBridge/close(timeout:)``.
        /// A message also stays below the server's maximum payload (1 MiB by default); an event too
        /// large to share a message goes alone. Events keep their per-publisher numbers and order:
        /// imports report gaps and drop duplicates per event. At-least-once, the server
        /// acknowledges each message, so one acknowledgment covers a batch.
        case events(max: Int, linger: Duration)

        /// The values `max` may take.
        public static let eventLimits: ClosedRange<Int> = 2...65_536
        /// The longest `linger`.
        public static let longestLinger: Duration = .seconds(10)
    }

    /// How the client proves who it is.
    public enum Credentials: Sendable, Equatable {
        /// No credentials (or the ones in the URLs, `nats://user:pass@host`).
        case none
        /// A user and a password.
        case userPassword(user: String, password: String)
        /// A token.
        case token(String)
    }

    /// Latency mode of publishing.
    public enum Latency: Sendable, Equatable {
        /// Publishes are buffered and flushed by the client's flusher thread.
        case batched
        /// Every publish is written to the socket at once (cnats `SendAsap`).
        case immediate
    }

    /// Limits of what may wait per import; see ``NATSOptions/pendingLimits``.
    public struct PendingLimits: Sendable, Equatable {
        /// Messages; cnats' default is 65 536.
        public var messages: Int
        /// Bytes; cnats' default is 64 MiB.
        public var bytes: Int

        public init(messages: Int = 65_536, bytes: Int = 64 * 1024 * 1024) {
            self.messages = messages
            self.bytes = bytes
        }
    }

    /// TLS settings supported by Debian's cnats 3.4 (built with OpenSSL).
    public struct TLS: Sendable, Equatable {
        /// PEM file of the certificate authorities to trust; nil uses the system's.
        public var trustedCertificatesFile: String?
        /// PEM files of a client certificate and its private key, for servers that verify clients.
        public var clientCertificateFile: String?
        public var clientKeyFile: String?
        /// The host name the server's certificate must carry, when it differs from the URL's.
        public var expectedHostname: String?
        /// Skips verifying the server's certificate. For tests only.
        public var skipsServerVerification: Bool
        /// OpenSSL cipher list (TLS 1.2 and below); nil keeps the default.
        public var ciphers: String?

        public init(
            trustedCertificatesFile: String? = nil, clientCertificateFile: String? = nil,
            clientKeyFile: String? = nil, expectedHostname: String? = nil, skipsServerVerification: Bool = false,
            ciphers: String? = nil
        ) {
            self.trustedCertificatesFile = trustedCertificatesFile
            self.clientCertificateFile = clientCertificateFile
            self.clientKeyFile = clientKeyFile
            self.expectedHostname = expectedHostname
            self.skipsServerVerification = skipsServerVerification
            self.ciphers = ciphers
        }
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSOptions {
    /// Why `url` is not a server URL the bridge can use, or nil when it is one. The checks are the
    /// ones cnats makes, and what it accepts without checking and fails on later as an
    /// unreachable server (a host with spaces): `[scheme://][user[:password]@]host[:port]`, the
    /// scheme `nats` or `tls`, a host without whitespace or control characters, and a port from
    /// 1 to 65 535.
    static func urlProblem(_ url: String) -> String? {
        if url.isEmpty { return "it is empty" }
        if let scalar = url.unicodeScalars.first(where: {
            $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F
        }) {
            return "it contains \(NATSNames.describe(scalar)) (expected nats://host:port or tls://host:port)"
        }
        var rest = Substring(url)
        if let separator = rest.range(of: "://") {
            let scheme = rest[..<separator.lowerBound].lowercased()
            guard scheme == "nats" || scheme == "tls" else {
                return "the scheme is \"\(scheme)\", not nats or tls"
            }
            rest = rest[separator.upperBound...]
        }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        // The port is after the last `:`, outside an IPv6 address's brackets.
        let afterAddress = rest.lastIndex(of: "]").map { rest[$0...] } ?? rest
        var host = rest
        if let colon = afterAddress.lastIndex(of: ":") {
            let port = rest[rest.index(after: colon)...]
            host = rest[..<colon]
            guard let number = Int(port), (1...65_535).contains(number) else {
                return "the port \"\(port)\" is not a number from 1 to 65535"
            }
        }
        if host.isEmpty && rest.isEmpty { return "it names no host" }
        return nil
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Duration {
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
