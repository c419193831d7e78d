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
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@usableFromInline
final class ExportedPublisher: @unchecked Sendable {
    // @unchecked: `subjectBytes` is written once, by init, and freed by deinit, when no
    // other reference can read it; every other stored property is Sendable.
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
    /// Publishes that failed: refused by cnats, or given up (counted in `undeliverable` too).
    let failures = HeapAtomicWord<Int>(0)
    /// At-least-once publishes given up after cnats accepted them (reported as `.undeliverable`).
    let undeliverable = HeapAtomicWord<Int>(0)
    /// ``RemoteDelivery/key``, read once (a `static let` costs a `swift_once` on every read).
    let remoteDeliveryKey = RemoteDelivery.key

    init(
        connection: NATSConnection, jetStream: JetStreamContext?, subject: String, tag: UInt8,
        eventIdentity: ObjectIdentifier, status: Event<NATSStatus>
    ) {
        self.connection = connection
        self.jetStream = jetStream
        self.subject = subject
        self.subjectBytes = strdup(subject)
        self.tag = tag
        self.eventIdentity = eventIdentity
        self.status = status
        var publisher: UInt64 = 0
        while publisher == 0 { publisher = UInt64.random(in: .min ... .max) }
        self.publisher = publisher
    }

    deinit {
        free(subjectBytes)
    }

    /// True when the value being sent arrived from NATS through an import into the same event.
    @usableFromInline
    func isRemoteEcho() -> Bool {
        guard let current = pthread_getspecific(remoteDeliveryKey) else { return false }
        return Unmanaged<ImportedSubject>.fromOpaque(current).takeUnretainedValue().eventIdentity == eventIdentity
    }

    /// Publishes `frame`, whose first ``FrameHeader/size`` bytes this fills in.
    @usableFromInline
    func publish(_ frame: UnsafeMutableRawBufferPointer) {
        let number = sequence.wrappingAdd(1, ordering: .relaxed).newValue
        FrameHeader(tag: tag, publisher: publisher, sequence: number).write(to: frame)
        if let jetStream {
            if let error = jetStream.publish(
                subject: subjectBytes, frame: UnsafeRawBufferPointer(frame), publisher: publisher, sequence: number)
            {
                reportFailure(error)
            }
            return
        }
        let result = natsConnection_Publish(
            connection.pointer, subjectBytes, frame.baseAddress, Int32(truncatingIfNeeded: frame.count))
        if result != NATS_OK { reportFailure(String(cString: natsStatus_GetText(result))) }
    }

    /// Counts a value the codec could not encode as a failed publish.
    @usableFromInline
    func reportUnencodable() {
        reportFailure("the codec could not encode the value")
    }

    func reportFailure(_ error: String) {
        failures.wrappingAdd(1, ordering: .relaxed)
        status.send(.publishFailed(subject: subject, error: error))
    }
}
