import CNATS
import Foundation
import ObserverSwift
import Synchronization

/// One import's subscription: checks frames, tracks publishers' sequence
/// numbers, and hands each good message to `deliver`, which sends it into
/// the local event. cnats holds a retained reference from subscribe until
/// the subscription's on-complete callback, made after its last message
/// callback has returned.
final class ImportedSubject: @unchecked Sendable {
    // @unchecked: `publishers` is read and written only by `receive`, which
    // cnats calls on the subscription's single dispatcher thread, one message
    // at a time (the same thread across reconnects). The other stored
    // properties are immutable, atomic, or guarded by `subscription`'s lock.

    enum Guarantee {
        /// Core NATS; report gaps in publishers' sequence numbers when `tracksGaps`.
        case atMostOnce(tracksGaps: Bool)
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

    let delivered = Atomic<Int>(0)
    let malformed = Atomic<Int>(0)
    let missed = Atomic<Int>(0)
    let duplicates = Atomic<Int>(0)
    let completed = DispatchSemaphore(value: 0)
    let subscription = LockedState<OpaquePointer?>(nil)

    private var publishers: [UInt64: SequenceWindow] = [:]

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
        let imported = Unmanaged<ImportedSubject>.fromOpaque(closure).takeUnretainedValue()
        RemoteDelivery.delivering(closure) { imported.receive(message) }
        natsMsg_Destroy(message)
    }

    /// cnats' on-complete callback: no message callback runs any more.
    static let onComplete: natsOnCompleteCB = { closure in
        guard let closure else { return }
        let imported = Unmanaged<ImportedSubject>.fromOpaque(closure).takeRetainedValue()
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
        case .atMostOnce(let tracksGaps):
            if tracksGaps { trackGap(header) }
        case .atLeastOnce:
            if !publishers[header.publisher, default: SequenceWindow()].insert(header.sequence) {
                duplicates.add(1, ordering: .relaxed)
                acknowledge(message)
                return
            }
        }
        let payload = UnsafeRawBufferPointer(rebasing: frame[FrameHeader.size...])
        if deliver(natsMsg_GetSubject(message), payload) {
            delivered.add(1, ordering: .relaxed)
        } else {
            reportMalformed()
        }
        acknowledge(message)
    }

    private func trackGap(_ header: FrameHeader) {
        let last = publishers[header.publisher]?.floor
        publishers[header.publisher] = SequenceWindow(floor: max(last ?? 0, header.sequence))
        guard let last, header.sequence > last + 1 else { return }
        let gap = Int(header.sequence - last - 1)
        missed.add(gap, ordering: .relaxed)
        status.send(.gap(subject: subject, publisher: header.publisher, missed: gap))
    }

    private func reportMalformed() {
        let count = malformed.add(1, ordering: .relaxed).newValue
        status.send(.malformed(subject: subject, count: count))
    }

    /// At-least-once: tells the consumer the message was handled (JetStream's `+ACK` to its reply subject).
    private func acknowledge(_ message: OpaquePointer) {
        guard case .atLeastOnce = guarantee, let reply = natsMsg_GetReply(message) else { return }
        _ = natsConnection_PublishString(connection.pointer, reply, "+ACK")
    }

    /// Unsubscribes and waits until no message callback runs; from this
    /// import's own handler it cannot wait, and destroys the subscription later.
    /// Returns the subscription's address, nil when it was cancelled already.
    @discardableResult
    func cancel() -> UInt? {
        guard
            let pointer = subscription.withLock({ stored -> OpaquePointer? in
                defer { stored = nil }
                return stored
            })
        else { return nil }
        let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer)))
        _ = natsSubscription_Unsubscribe(pointer)
        if RemoteDelivery.current == Unmanaged.passUnretained(self).toOpaque() {
            let completed = self.completed
            DispatchQueue.global().async {
                completed.wait()
                natsSubscription_Destroy(OpaquePointer(bitPattern: Int(bitPattern: address)))
            }
            return address
        }
        completed.wait()
        natsSubscription_Destroy(pointer)
        return address
    }
}

/// The sequence numbers of one publisher already delivered: every number
/// up to `floor`, and the ones in `above`. Redeliveries may come in any
/// order, so a maximum alone would drop a message never delivered.
struct SequenceWindow {
    var floor: UInt64 = 0
    var above: Set<UInt64> = []
    /// Numbers kept above the floor before the lowest is given up (a filtered
    /// import never sees some numbers, so its floor could stall).
    static let capacity = 1 << 16

    init(floor: UInt64 = 0) {
        self.floor = floor
    }

    /// Records `sequence`; false when it was delivered already.
    mutating func insert(_ sequence: UInt64) -> Bool {
        if sequence <= floor { return false }
        if sequence == floor + 1 {
            floor = sequence
            while above.remove(floor + 1) != nil { floor += 1 }
            return true
        }
        guard above.insert(sequence).inserted else { return false }
        if above.count > Self.capacity, let lowest = above.min() {
            above.remove(lowest)
            floor = lowest
            while above.remove(floor + 1) != nil { floor += 1 }
        }
        return true
    }
}
