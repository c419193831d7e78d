/// What a ``NATSBridge`` reports through ``NATSBridge/status``.
///
/// This enum may gain cases: new cases are added in minor releases, when the bridge learns to
/// report something new; an existing case keeps its name, its associated values and its meaning
/// (a case whose meaning would change is replaced, in a major release). A `switch` that lists
/// every case and ends with neither `@unknown default:` nor `default:` stops compiling when a
/// case is added ("switch must be exhaustive"). So end a `switch` over a status with
/// `@unknown default:`, which compiles without a warning today and turns a case added later
/// into a warning that names it ("switch must be exhaustive", "add missing case") instead of a
/// build failure; or with `default:` where the other statuses do not matter:
///
/// ```swift
/// func describe(_ status: NATSStatus) -> String? {
///     switch status {
///     case .disconnected: "reconnecting"
///     case .refused(let subject, let count, let reason): "\(count) events to \(subject) refused: \(reason)"
///     default: nil
///     }
/// }
/// ```
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public enum NATSStatus: Sendable, Equatable {
    /// Connected to this server (sent once, by the initializer).
    case connected(url: String)
    /// The connection to the server was lost; the client is reconnecting.
    case disconnected
    /// Connected again, to this server; imports are subscribed again.
    case reconnected(url: String)
    /// The connection closed for good (by ``NATSBridge/close(timeout:)`` or after the last reconnect attempt).
    case closed
    /// An import's handlers fell behind: the client dropped messages.
    /// `dropped` is the import's total of dropped messages so far.
    case slowConsumer(subject: String, dropped: Int)
    /// At-most-once: an import received `publisher`'s sequence number after a jump:
    /// `missed` messages of that publisher never arrived.
    case gap(subject: String, publisher: UInt64, missed: Int)
    /// An import received a message that is not a frame of its type, or an event of a batch
    /// frame that does not decode; `count` is the import's total of malformed messages and
    /// events so far. The message (or event) was dropped.
    case malformed(subject: String, count: Int)
    /// A publish failed (closed connection, reconnect buffer full, key without subject tokens, a value the codec
    /// could not encode, or the server denied it: then `error` is the server's words). One status per message:
    /// with batching, per batch.
    case publishFailed(subject: String, error: String)
    /// At-least-once: `count` events published to `subject` given up without a confirmation:
    /// the bridge closed (``NATSBridge/close(timeout:)``'s timeout passed) before the server
    /// acknowledged them. Each may or may not have been stored: its acknowledgment did not
    /// arrive in time. Each is also counted in its export's ``NATSExport/failedPublishes`` and
    /// ``NATSExport/unconfirmedPublishes``.
    case unconfirmed(subject: String, count: Int, reason: String)
    /// At-least-once: `count` events published to `subject` that were not stored and never will
    /// be, for `reason`: the server refused them (a limit, a permission), the stream no longer
    /// exists, or it no longer stores `subject`. Each is also counted in its export's
    /// ``NATSExport/failedPublishes`` and ``NATSExport/refusedPublishes``.
    case refused(subject: String, count: Int, reason: String)
    /// At-least-once: the consumer of an import sent neither a message nor an idle heartbeat
    /// for three heartbeat intervals while connected; the bridge recreates it.
    case consumerStalled(subject: String, durable: String)
    /// At-least-once: a stalled consumer delivers again (after its recreation).
    case consumerRecovered(subject: String, durable: String)
    /// A mirror (``NATSBridge/mirror(_:bucket:key:)``) no longer hears its bucket, for
    /// `reason`: the bucket was deleted. Until a bucket of that name exists again, the mirror
    /// sets nothing, and its writes wait (counted in ``NATSBridge/pendingPublishes``). Sent on
    /// the mirror's watcher thread.
    case mirrorStalled(bucket: String, key: String, reason: String)
    /// A stalled mirror watches its bucket again (created again): the key's value in the new
    /// bucket, if any, is set next, and the mirror follows the bucket as before. Sent on the
    /// mirror's watcher thread.
    case mirrorRecovered(bucket: String, key: String)
    /// Any other asynchronous error the client reported; a permission denial of nothing the bridge
    /// is publishing or subscribing now (an import's subscription after the permissions changed) is
    /// the server's words, which name the subject.
    case error(String)
}
