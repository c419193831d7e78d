import CNATS
import Foundation
import ObserverSwift

/// One import's subscription: checks frames, tracks publishers' sequence
/// numbers, and hands each good message to `deliver`, which sends it into
/// the local event. cnats holds a retained reference from subscribe until
/// the subscription's on-complete callback, made after its last message
/// callback has returned.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class ImportedSubject: @unchecked Sendable {
    // @unchecked: `gaps` and `duplicateFilter` are read and written only by `receive`, which
    // cnats calls on the subscription's single dispatcher thread, one message
    // at a time (the same thread across reconnects). The other stored
    // properties are immutable, atomic, or guarded by `subscription`'s lock.

    enum Guarantee {
        /// Core NATS; report gaps in publishers' sequence numbers.
        case atMostOnce
        /// JetStream: drop sequence numbers already delivered, acknowledge after delivery.
        case atLeastOnce
    }

    let subject: String
    let connection: NATSConnection
    let eventIdentity: ObjectIdentifier
    let expectedTag: UInt8
    let guarantee: Guarantee
    let status: Event<NATSStatus>
    /// Decodes the payload and sends it into the event; false when it does not decode.
    let deliver: @Sendable (_ subject: UnsafePointer<CChar>, _ payload: UnsafeRawBufferPointer) -> Bool

    let deliveredCount = HeapAtomicWord<Int>(0)
    let malformed = HeapAtomicWord<Int>(0)
    let missed = HeapAtomicWord<Int>(0)
    let duplicates = HeapAtomicWord<Int>(0)
    /// Guards `isComplete`; broadcast by `onComplete`.
    private let completion = NSCondition()
    /// Set by `onComplete`: no message callback runs any more.
    private var isComplete = false
    /// Set once the subscription is handed to cnats, whose on-complete callback then comes.
    let wasSubscribed = HeapAtomicWord<Bool>(false)
    /// ``RemoteDelivery/key``, read once (a `static let` costs a `swift_once` on every read):
    /// `onMessage` marks this import as the one delivering on its thread with it, and
    /// `onComplete` clears the mark.
    let remoteDeliveryKey = RemoteDelivery.key
    let subscription = Locked<OpaquePointer?>(nil)
    /// The bridge's imports' subscriptions by address (``ConnectionCallbacks/importSubjects``).
    let registry: Locked<[UInt: String]>

    /// Publishers whose state was forgotten (idle past the expiry, or the table full).
    let forgottenPublishers = HeapAtomicWord<Int>(0)
    /// At-least-once: ranges of delivered numbers forgotten to keep within the window's budget.
    let forgottenRanges = HeapAtomicWord<Int>(0)
    /// At-most-once: each publisher's highest sequence number seen here.
    private var gaps: GapTracker
    /// At-least-once: what each publisher had delivered here.
    private var duplicateFilter: DuplicateFilter

    init(
        subject: String, connection: NATSConnection, eventIdentity: ObjectIdentifier, expectedTag: UInt8,
        guarantee: Guarantee,
        status: Event<NATSStatus>,
        registry: Locked<[UInt: String]>,
        limits: PublisherLimits = .standard,
        deliver: @escaping @Sendable (UnsafePointer<CChar>, UnsafeRawBufferPointer) -> Bool
    ) {
        self.registry = registry
        self.gaps = GapTracker(limits: limits)
        self.duplicateFilter = DuplicateFilter(limits: limits)
        self.subject = subject
        self.connection = connection
        self.eventIdentity = eventIdentity
        self.expectedTag = expectedTag
        self.guarantee = guarantee
        self.status = status
        self.deliver = deliver
    }

    /// cnats' message callback: `closure` is an `ImportedSubject`.
    static let onMessage: natsMsgHandler = { _, _, message, closure in
        guard let message, let closure else { return }
        // cnats' reference keeps the import alive during the callback: no retain of ours.
        Unmanaged<ImportedSubject>.fromOpaque(closure)._withUnsafeGuaranteedRef { imported in
            // The mark stays from the first message to `onComplete` (see RemoteDelivery.current):
            // set once per thread, not twice per message.
            let key = imported.remoteDeliveryKey
            if pthread_getspecific(key) != closure { pthread_setspecific(key, closure) }
            imported.receive(message)
        }
        natsMsg_Destroy(message)
    }

    /// cnats' on-complete callback: no message callback runs any more.
    static let onComplete: natsOnCompleteCB = { closure in
        guard let closure else { return }
        let imported = Unmanaged<ImportedSubject>.fromOpaque(closure).takeRetainedValue()
        // cnats calls this on the subscription's delivery thread, after its last message callback.
        if pthread_getspecific(imported.remoteDeliveryKey) == closure {
            pthread_setspecific(imported.remoteDeliveryKey, nil)
        }
        imported.completion.lock()
        imported.isComplete = true
        imported.completion.broadcast()
        imported.completion.unlock()
    }

    /// Waits until no message callback of this import runs any more (its on-complete callback
    /// has run); returns at once when it never subscribed.
    func waitUntilComplete() {
        guard wasSubscribed.load(ordering: .acquiring) else { return }
        completion.lock()
        while !isComplete { completion.wait() }
        completion.unlock()
    }

    /// Whether the calling thread is this import's delivery thread (running its handlers).
    var isDeliveringOnThisThread: Bool {
        RemoteDelivery.current == Unmanaged.passUnretained(self).toOpaque()
    }

    func receive(_ message: OpaquePointer) {
        let length = Int(natsMsg_GetDataLength(message))
        let frame = UnsafeRawBufferPointer(start: natsMsg_GetData(message), count: length)
        if length > 0 && frame[0] == BatchFrameHeader.formatVersion {
            receiveBatch(message, frame)
            return
        }
        guard let header = FrameHeader(frame: frame, expectedTag: expectedTag) else {
            reportMalformed()
            acknowledge(message)
            return
        }
        let payload = UnsafeRawBufferPointer(rebasing: frame[FrameHeader.size...])
        receiveEvent(
            publisher: header.publisher, sequence: header.sequence, payload: payload,
            subject: natsMsg_GetSubject(message), now: Self.monotonicNanoseconds())
        acknowledge(message)
    }

    /// A batch frame: each event goes through the same gap and duplicate checks as a single
    /// frame, in order; at-least-once, the message is acknowledged once, after the last event.
    private func receiveBatch(_ message: OpaquePointer, _ frame: UnsafeRawBufferPointer) {
        guard let header = BatchFrameHeader(frame: frame, expectedTag: expectedTag) else {
            reportMalformed()
            acknowledge(message)
            return
        }
        let subject = natsMsg_GetSubject(message)
        let now = Self.monotonicNanoseconds()
        header.forEachEvent(in: frame) { sequence, payload in
            receiveEvent(publisher: header.publisher, sequence: sequence, payload: payload, subject: subject, now: now)
        }
        acknowledge(message)
    }

    /// One event: checks its number (gap, duplicate) and delivers it. The caller acknowledges.
    private func receiveEvent(
        publisher: UInt64, sequence: UInt64, payload: UnsafeRawBufferPointer, subject: UnsafePointer<CChar>?,
        now: UInt64
    ) {
        switch guarantee {
        case .atMostOnce:
            let verdict = gaps.record(publisher: publisher, sequence: sequence, now: now)
            noteForgotten(gaps.table.forgotten)
            switch verdict {
            case .malformed:
                reportMalformed()
                return
            case .gap(let count):
                missed.wrappingAdd(count, ordering: .relaxed)
                status.send(.gap(subject: self.subject, publisher: publisher, missed: count))
            case .deliver, .duplicate:
                break
            }
        case .atLeastOnce:
            let verdict = duplicateFilter.record(publisher: publisher, sequence: sequence, now: now)
            noteForgotten(duplicateFilter.table.forgotten)
            if duplicateFilter.forgottenRanges != forgottenRanges.load(ordering: .relaxed) {
                forgottenRanges.store(duplicateFilter.forgottenRanges, ordering: .relaxed)
            }
            switch verdict {
            case .malformed:
                reportMalformed()
                return
            case .duplicate:
                duplicates.wrappingAdd(1, ordering: .relaxed)
                return
            case .deliver, .gap:
                break
            }
        }
        guard let subject else {
            reportMalformed()
            return
        }
        if deliver(subject, payload) {
            // Only this thread writes the count (see above): a plain increment, no read-modify-write.
            deliveredCount.store(deliveredCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        } else {
            reportMalformed()
        }
    }

    /// Publishes the tracker's count of forgotten publishers to ``forgottenPublishers``.
    @inline(__always)
    private func noteForgotten(_ count: Int) {
        // Only this thread writes the count (see above).
        if count != forgottenPublishers.load(ordering: .relaxed) {
            forgottenPublishers.store(count, ordering: .relaxed)
        }
    }

    /// A monotonic clock for the publishers' idle expiry, in nanoseconds: the coarse clock on
    /// Linux (a few nanoseconds a read, at the kernel tick's resolution, which is plenty for
    /// an expiry of minutes).
    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        #if os(Linux)
            clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        #else
            clock_gettime(CLOCK_MONOTONIC, &time)
        #endif
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    private func reportMalformed() {
        let count = malformed.wrappingAdd(1, ordering: .relaxed).newValue
        status.send(.malformed(subject: subject, count: count))
    }

    /// At-least-once: tells the consumer the message was handled (JetStream's `+ACK` to its reply subject).
    private func acknowledge(_ message: OpaquePointer) {
        guard case .atLeastOnce = guarantee, let reply = natsMsg_GetReply(message) else { return }
        _ = natsConnection_PublishString(connection.pointer, reply, "+ACK")
    }

    /// Unsubscribes and waits until no message callback runs (from this import's own
    /// handler it cannot wait), then destroys the `natsSubscription` once cnats can no longer
    /// reach it. Returns it when it could not be destroyed yet (cancelled from its own handler,
    /// or the connection is not up): the caller hands it to ``NATSBridge``, which destroys it
    /// after the connection has closed. Nil when destroyed, or cancelled already.
    ///
    /// When cnats can no longer reach it: cnats' reader thread looks a message's subscription
    /// up under the connection's lock but locks the subscription after releasing that lock,
    /// holding no reference (cnats 3.4 `natsConn_processMsg`), so a subscription destroyed
    /// right after its on-complete callback could still be locked by the reader (seen: a freed
    /// mutex locked, about 1 run in 15). A flush (PING, answered by PONG) read back by the same
    /// reader thread, which handles the socket's bytes in order, proves that the reader has
    /// finished with every message it had read before the unsubscription. The slow-consumer
    /// callback, which also gets the pointer unretained, touches it only while it is
    /// registered in `registry` (see ``ConnectionCallbacks/asyncError(subscription:error:)``).
    func cancel() -> OpaquePointer? {
        guard
            let pointer = subscription.withLock({ stored -> OpaquePointer? in
                defer { stored = nil }
                return stored
            })
        else { return nil }
        _ = natsSubscription_Unsubscribe(pointer)
        if isDeliveringOnThisThread { return pointer }
        waitUntilComplete()
        guard natsConnection_Status(connection.pointer) == NATS_CONN_STATUS_CONNECTED,
            natsConnection_FlushTimeout(connection.pointer, 1000) == NATS_OK
        else { return pointer }
        let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer)))
        registry.withLock { _ = $0.removeValue(forKey: address) }
        natsSubscription_Destroy(pointer)
        return nil
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSImport {
    /// Publishers this import has forgotten so far: each import remembers at most 10 000
    /// publishers (the least recently seen one is forgotten to make room) and forgets one not
    /// seen for 10 minutes. A forgotten publisher's next frame starts afresh: at-most-once, a gap
    /// across its silence is not reported; at-least-once, a redelivered copy of one of its
    /// earlier messages is delivered again.
    public var forgottenPublisherCount: Int { imported.forgottenPublishers.load(ordering: .relaxed) }

    /// At-least-once: ranges of delivered sequence numbers this import has forgotten. The
    /// de-duplication windows of an import hold at most 262 144 ranges together (a range is a run
    /// of consecutive numbers delivered; holes between them make more); beyond that a publisher's
    /// lowest range is forgotten, and a redelivered copy of a message in it would be delivered
    /// again. Honest redeliveries stay far below the bound; a peer publishing every other number
    /// reaches it.
    public var forgottenDeliveryRangeCount: Int { imported.forgottenRanges.load(ordering: .relaxed) }
}
