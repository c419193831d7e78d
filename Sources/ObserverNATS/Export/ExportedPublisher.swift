import CNATS
import Foundation
import ObserverSwift

/// Publishes one subject's frames: stamps each with the export's identity
/// and next sequence number and hands it to cnats. Runs inside the local
/// `send`, on the sending thread: the export's closure (specialized for the
/// value type where the export was made) encodes the value into a stack
/// buffer and calls ``publish(_:)``, which costs one atomic increment, the
/// header's stores and the cnats publish call (which copies the frame into
/// the connection's buffer); no allocation, no lock of the bridge's.
///
/// With batching (``NATSOptions/batching``), ``publish(_:)`` appends the value to the
/// publisher's pending batch under `batchLock` instead, numbering it there (so batches carry
/// consecutive numbers in send order), and sends the batch when it is full, when the bridge's
/// linger thread finds it lingered long enough, or on flush, cancel and close.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@usableFromInline
final class ExportedPublisher: @unchecked Sendable {
    // @unchecked: `subjectBytes` is written once, by init, and freed by deinit, when no
    // other reference can read it; `senders` is written once, when the publisher is registered,
    // before its export subscribes and so before any publish; `pendingBatch` is only touched
    // under `batchLock`; every other stored property is Sendable.
    let connection: NATSConnection
    let jetStream: JetStreamContext?
    let subject: String
    /// `subject` as a NUL-terminated C string, made once instead of on every publish.
    let subjectBytes: UnsafeMutablePointer<CChar>
    let tag: UInt8
    let eventIdentity: ObjectIdentifier
    let publisher: UInt64
    let sequence = HeapAtomicWord<UInt64>(0)
    let status: Event<NATSStatus>
    /// Publishes that failed: refused by cnats or denied by the server, or given up (counted in
    /// `unconfirmed` or `refused` too).
    let failures = HeapAtomicWord<Int>(0)
    /// At-least-once publishes given up unacknowledged when the bridge closed (`.unconfirmed`).
    let unconfirmed = HeapAtomicWord<Int>(0)
    /// At-least-once publishes that will never be stored (`.refused`).
    let refused = HeapAtomicWord<Int>(0)
    /// ``RemoteDelivery/key``, read once (a `static let` costs a `swift_once` on every read).
    let remoteDeliveryKey = RemoteDelivery.key
    /// Nil unless the bridge batches.
    let batching: BatchSettings?
    /// At most once: the publishers of this subject on this connection, which order the server's
    /// denials (see ``SubjectSenders``). Nil at least once.
    var senders: SubjectSenders?
    private let batchLock = NSLock()
    private var pendingBatch = PendingBatch()

    init(
        connection: NATSConnection, jetStream: JetStreamContext?, subject: String, tag: UInt8,
        eventIdentity: ObjectIdentifier, status: Event<NATSStatus>, batching: BatchSettings? = nil
    ) {
        self.batching = batching
        self.connection = connection
        self.jetStream = jetStream
        self.subject = subject
        self.subjectBytes = strdup(subject)
        self.tag = tag
        self.eventIdentity = eventIdentity
        self.status = status
        self.publisher = FrameHeader.newPublisher()
    }

    deinit {
        free(subjectBytes)
        free(pendingBatch.buffer)
    }

    /// True when the value being sent arrived from NATS through an import into the same event.
    @usableFromInline
    func isRemoteEcho() -> Bool {
        guard let current = pthread_getspecific(remoteDeliveryKey) else { return false }
        return Unmanaged<ImportedSubject>.fromOpaque(current).takeUnretainedValue().eventIdentity == eventIdentity
    }

    /// Publishes `frame`, whose first ``FrameHeader/size`` bytes this fills in (or, batching,
    /// adds the value after them to the pending batch).
    @usableFromInline
    func publish(_ frame: UnsafeMutableRawBufferPointer) {
        if let batching {
            addToBatch(UnsafeRawBufferPointer(rebasing: frame[FrameHeader.size...]), frame, batching)
            return
        }
        let number = sequence.wrappingAdd(1, ordering: .relaxed).newValue
        FrameHeader(tag: tag, publisher: publisher, sequence: number).write(to: frame)
        if let error = send(UnsafeRawBufferPointer(frame), sequence: number) { reportFailure(error) }
    }

    /// Hands one frame (single or batch) to cnats or JetStream; returns why it failed, or nil.
    private func send(_ frame: UnsafeRawBufferPointer, sequence: UInt64) -> String? {
        if let jetStream {
            return jetStream.publish(subject: subjectBytes, frame: frame, publisher: publisher, sequence: sequence)
        }
        let publish = {
            natsConnection_Publish(
                self.connection.pointer, self.subjectBytes, frame.baseAddress, Int32(truncatingIfNeeded: frame.count))
        }
        let result = senders.map { $0.publish(self, publish) } ?? publish()
        return result == NATS_OK ? nil : String(cString: natsStatus_GetText(result))
    }

    /// A failed send of `count` events, reported once the batch lock is released.
    private struct BatchFailure {
        var error: String
        var count: Int
    }

    /// Batching: adds `value` to the pending batch, sending the batch first when the value does
    /// not fit in it and after when it is full. A value too large for any batch goes alone, as a
    /// single frame (`frame`, whose header room this fills in), after the pending batch.
    private func addToBatch(
        _ value: UnsafeRawBufferPointer, _ frame: UnsafeMutableRawBufferPointer, _ batching: BatchSettings
    ) {
        let needed = BatchFrameHeader.lengthSize + value.count
        var failures: [BatchFailure] = []
        batchLock.lock()
        if needed > batching.maxBytes - BatchFrameHeader.size {
            if let failure = sendBatchLocked() { failures.append(failure) }
            let number = sequence.wrappingAdd(1, ordering: .relaxed).newValue
            FrameHeader(tag: tag, publisher: publisher, sequence: number).write(to: frame)
            if let error = send(UnsafeRawBufferPointer(frame), sequence: number) {
                failures.append(BatchFailure(error: error, count: 1))
            }
            batchLock.unlock()
            for failure in failures { reportFailure(failure.error, count: failure.count) }
            return
        }
        if pendingBatch.count > 0 && pendingBatch.byteCount + needed > batching.maxBytes {
            if let failure = sendBatchLocked() { failures.append(failure) }
        }
        let number = sequence.wrappingAdd(1, ordering: .relaxed).newValue
        var isScheduled = true
        if pendingBatch.count == 0 {
            pendingBatch.firstSequence = number
            pendingBatch.generation &+= 1
            isScheduled = batching.linger.schedule(self, generation: pendingBatch.generation)
        }
        pendingBatch.reserve(needed, limit: batching.maxBytes)
        let end = pendingBatch.buffer! + pendingBatch.byteCount
        end.storeBytes(of: UInt32(truncatingIfNeeded: value.count).littleEndian, as: UInt32.self)
        if let base = value.baseAddress, value.count > 0 {
            (end + BatchFrameHeader.lengthSize).copyMemory(from: base, byteCount: value.count)
        }
        pendingBatch.byteCount += needed
        pendingBatch.count += 1
        if pendingBatch.count >= batching.maxEvents || !isScheduled {
            if let failure = sendBatchLocked() { failures.append(failure) }
        }
        batchLock.unlock()
        for failure in failures { reportFailure(failure.error, count: failure.count) }
    }

    /// Sends the pending batch, if any; the caller holds `batchLock`.
    private func sendBatchLocked() -> BatchFailure? {
        guard pendingBatch.count > 0, let buffer = pendingBatch.buffer else { return nil }
        let frame = UnsafeMutableRawBufferPointer(start: buffer, count: pendingBatch.byteCount)
        let count = pendingBatch.count
        let first = pendingBatch.firstSequence
        BatchFrameHeader(tag: tag, publisher: publisher, firstSequence: first, count: count).write(to: frame)
        let error = send(UnsafeRawBufferPointer(frame), sequence: first)
        pendingBatch.reset()
        return error.map { BatchFailure(error: $0, count: count) }
    }

    /// Sends the pending batch now (flush, cancel, close). No-op without batching.
    func sendPendingBatch() {
        guard batching != nil else { return }
        batchLock.lock()
        let failure = sendBatchLocked()
        batchLock.unlock()
        if let failure { reportFailure(failure.error, count: failure.count) }
    }

    /// The linger thread: sends batch `generation` if it is still the pending one.
    func lingerExpired(generation: UInt64) {
        batchLock.lock()
        let failure = pendingBatch.generation == generation ? sendBatchLocked() : nil
        batchLock.unlock()
        if let failure { reportFailure(failure.error, count: failure.count) }
    }

    /// Counts a value the codec could not encode as a failed publish.
    @usableFromInline
    func reportUnencodable() {
        reportFailure("the codec could not encode the value")
    }

    /// Counts `count` events not published and reports them.
    func reportFailure(_ error: String, count: Int = 1) {
        failures.wrappingAdd(count, ordering: .relaxed)
        status.send(.publishFailed(subject: subject, error: error))
    }
}
