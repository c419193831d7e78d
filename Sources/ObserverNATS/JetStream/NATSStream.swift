/// A JetStream stream that at-least-once exports publish into and
/// at-least-once imports consume from. ``NATSBridge`` creates it when it
/// does not exist yet. When a stream of that name exists, the bridge binds to it: every setting
/// stated here must match the server's (a difference is an error naming it, and the stream is
/// not changed), and every setting left nil is the server's, whatever it is.
///
/// ```swift
/// let orders = NATSStream(
///     name: "ORDERS", subjects: ["orders.>"], replicas: 3, storage: .file, retention: .limits,
///     maxAge: .seconds(24 * 3600))
/// // Binds to ORDERS as it is configured (R3 or not), as long as it stores orders.>:
/// let existing = NATSStream(name: "ORDERS", subjects: ["orders.>"])
/// ```
///
/// The name goes into the subjects of the JetStream API, so it follows nats-server's rules for
/// stream names: 1 to 255 bytes; no whitespace, no control character, no `.`, `*`, `>`, `/` or
/// `\`. A name that breaks one is refused before anything is sent, with
/// ``NATSError/Kind/invalidOption`` and the rule it breaks.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public struct NATSStream: Sendable, Equatable {
    /// The stream's name (see the rules above); letters, digits, `-` and `_` are always safe.
    public var name: String
    /// The subjects the stream stores (wildcards allowed). Always compared with an existing stream's.
    public var subjects: [String]
    /// How long the server remembers message IDs to drop republished duplicates.
    /// Nil: an existing stream's; 120 s for a stream the bridge creates.
    public var duplicateWindow: Duration?
    /// Copies of every message the cluster keeps (1 to 5; more than 1 needs a cluster).
    /// Nil: an existing stream's; 1 for a stream the bridge creates.
    public var replicas: Int?
    /// Where the servers keep the messages. Nil: an existing stream's; ``Storage/file`` for a
    /// stream the bridge creates.
    public var storage: Storage?
    /// When the servers remove messages. Nil: an existing stream's; ``Retention/limits`` for a
    /// stream the bridge creates.
    public var retention: Retention?
    /// How long a message is kept at most; `.zero` states that messages have no age limit.
    /// Nil: an existing stream's; no age limit for a stream the bridge creates.
    public var maxAge: Duration?

    public init(
        name: String, subjects: [String], duplicateWindow: Duration? = nil, replicas: Int? = nil,
        storage: Storage? = nil, retention: Retention? = nil, maxAge: Duration? = nil
    ) {
        self.name = name
        self.subjects = subjects
        self.duplicateWindow = duplicateWindow
        self.replicas = replicas
        self.storage = storage
        self.retention = retention
        self.maxAge = maxAge
    }

    /// The duplicate window of a stream the bridge creates when ``duplicateWindow`` is nil.
    public static let defaultDuplicateWindow: Duration = .seconds(120)

    /// Throws ``NATSError/Kind/invalidOption`` naming the rule when ``name`` cannot be used, or a
    /// stated ``replicas`` is not 1 to 5; ``NATSError/Kind/invalidSubject`` when a subject is not
    /// a subject or pattern.
    func checkSettings() throws(NATSError) {
        if let problem = NATSNames.assetNameProblem(name) {
            throw NATSError(
                .invalidOption, "stream name \(NATSBridge.abbreviated(name)) cannot be used: \(problem)")
        }
        if let replicas, !(1...5).contains(replicas) {
            throw NATSError(.invalidOption, "stream \(name): replicas must be 1 to 5, not \(replicas)")
        }
        for subject in subjects where !NATSSubject.isValidPattern(subject) {
            throw NATSError(
                .invalidSubject, "stream \(name): \(NATSBridge.abbreviated(subject)) is not a subject or pattern")
        }
    }

    /// Where a stream's messages are kept.
    public enum Storage: Sendable, Equatable {
        /// On disk: survives a server restart.
        case file
        /// In memory: lost when every server holding a replica stops.
        case memory
    }

    /// When a stream's messages are removed.
    public enum Retention: Sendable, Equatable {
        /// When a limit (``NATSStream/maxAge``) removes them; every consumer can read everything.
        case limits
        /// Once every consumer that exists has acknowledged them.
        case interest
        /// Once one consumer has acknowledged them (each message is consumed once).
        case workQueue
    }
}
