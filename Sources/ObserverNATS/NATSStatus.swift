/// What a ``NATSBridge`` reports through ``NATSBridge/status``.
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
    /// could not encode). One status per message: with batching, per batch.
    case publishFailed(subject: String, error: String)
    /// At-least-once: `count` events published to `subject` that will never be stored, given up for
    /// `reason` (the stream no longer exists, the server refused them for a limit, or the
    /// bridge closed before the server acknowledged them). Each is also counted in its
    /// export's ``NATSExport/failedPublishes`` and ``NATSExport/undeliverablePublishes``.
    case undeliverable(subject: String, count: Int, reason: String)
    /// At-least-once: the consumer of an import sent neither a message nor an idle heartbeat
    /// for three heartbeat intervals while connected; the bridge recreates it.
    case consumerStalled(subject: String, durable: String)
    /// At-least-once: a stalled consumer delivers again (after its recreation).
    case consumerRecovered(subject: String, durable: String)
    /// Any other asynchronous error the client reported.
    case error(String)
}
