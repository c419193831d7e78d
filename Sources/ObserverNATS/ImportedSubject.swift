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
    // @unchecked: `delivered`, `latest` and `recent*` are read and written only by `receive`, which
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
    let completed = DispatchSemaphore(value: 0)
    /// ``RemoteDelivery/key``, read once (a `static let` costs a `swift_once` on every read):
    /// `onMessage` marks this import as the one delivering on its thread with it, and
    /// `onComplete` clears the mark.
    let remoteDeliveryKey = RemoteDelivery.key
    let subscription = LockedState<OpaquePointer?>(nil)

    /// At-least-once: what each publisher had delivered here.
    private var delivered: [UInt64: SequenceWindow] = [:]
    /// At-most-once: each publisher's latest sequence number seen here; the publisher of
    /// the previous message is kept apart, so that a run of one publisher's messages
    /// costs no hashing.
    private var latest: [UInt64: UInt64] = [:]
    private var recentPublisher: UInt64 = 0
    private var recentSequence: UInt64 = 0

    init(
        subject: String, connection: NATSConnection, eventIdentity: ObjectIdentifier, expectedTag: UInt8,
        guarantee: Guarantee,
        status: Event<NATSStatus>,
        deliver: @escaping @Sendable (UnsafePointer<CChar>, UnsafeRawBufferPointer) -> Bool
    ) {
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
        imported.completed.signal()
    }

    func receive(_ message: OpaquePointer) {
        let length = Int(natsMsg_GetDataLength(message))
        let frame = UnsafeRawBufferPointer(start: natsMsg_GetData(message), count: length)
        guard let header = FrameHeader(frame: frame, expectedTag: expectedTag) else {
            reportMalformed()
            acknowledge(message)
            return
        }
        switch guarantee {
        case .atMostOnce:
            trackGap(header)
        case .atLeastOnce:
            if !delivered[header.publisher, default: SequenceWindow()].insert(header.sequence) {
                duplicates.wrappingAdd(1, ordering: .relaxed)
                acknowledge(message)
                return
            }
        }
        let payload = UnsafeRawBufferPointer(rebasing: frame[FrameHeader.size...])
        if deliver(natsMsg_GetSubject(message), payload) {
            // Only this thread writes the count (see above): a plain increment, no read-modify-write.
            deliveredCount.store(deliveredCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        } else {
            reportMalformed()
        }
        acknowledge(message)
    }

    private func trackGap(_ header: FrameHeader) {
        let last: UInt64?
        if header.publisher == recentPublisher {
            last = recentSequence
        } else {
            // Another publisher than the previous message's: park that one in the table.
            if recentPublisher != 0 { latest[recentPublisher] = recentSequence }
            last = latest[header.publisher]
            recentPublisher = header.publisher
        }
        recentSequence = max(last ?? 0, header.sequence)
        guard let last, header.sequence > last + 1 else { return }
        let gap = Int(header.sequence - last - 1)
        missed.wrappingAdd(gap, ordering: .relaxed)
        status.send(.gap(subject: subject, publisher: header.publisher, missed: gap))
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
    /// handler it cannot wait). Returns the `natsSubscription`, which the caller hands to
    /// ``NATSBridge`` to destroy after the connection has closed; nil when cancelled already.
    func cancel() -> OpaquePointer? {
        guard
            let pointer = subscription.withLock({ stored -> OpaquePointer? in
                defer { stored = nil }
                return stored
            })
        else { return nil }
        _ = natsSubscription_Unsubscribe(pointer)
        if RemoteDelivery.current != Unmanaged.passUnretained(self).toOpaque() {
            completed.wait()
        }
        return pointer
    }
}

/// The sequence numbers of one publisher already delivered, as disjoint
/// ranges: redeliveries may come in any order, and a receiver may start in
/// the middle of a publisher's numbers, so neither a maximum nor a floor
/// from 1 would do. Memory grows with the holes (numbers not delivered yet
/// while later ones were), not with the messages: in order, it is one range.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct SequenceWindow {
    /// Sorted, disjoint and not adjacent.
    private(set) var ranges: [ClosedRange<UInt64>] = []

    /// Records `sequence`; false when it was delivered already.
    mutating func insert(_ sequence: UInt64) -> Bool {
        guard let last = ranges.last else {
            ranges.append(sequence...sequence)
            return true
        }
        if sequence == last.upperBound &+ 1 {
            ranges[ranges.count - 1] = last.lowerBound...sequence
            return true
        }
        if sequence > last.upperBound {
            ranges.append(sequence...sequence)
            return true
        }
        // The first range that does not end below `sequence` (the last one at worst).
        var low = 0
        var high = ranges.count - 1
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < sequence { low = middle + 1 } else { high = middle }
        }
        if ranges[low].contains(sequence) { return false }
        let joinsNext = sequence &+ 1 == ranges[low].lowerBound
        let joinsPrevious = low > 0 && ranges[low - 1].upperBound &+ 1 == sequence
        switch (joinsPrevious, joinsNext) {
        case (true, true):
            ranges[low - 1] = ranges[low - 1].lowerBound...ranges[low].upperBound
            ranges.remove(at: low)
        case (true, false):
            ranges[low - 1] = ranges[low - 1].lowerBound...sequence
        case (false, true):
            ranges[low] = sequence...ranges[low].upperBound
        case (false, false):
            ranges.insert(sequence...sequence, at: low)
        }
        return true
    }
}
