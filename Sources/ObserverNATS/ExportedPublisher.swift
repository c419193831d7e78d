import CNATS
import Foundation
import ObserverSwift

/// Publishes one export's values: stamps each frame with the export's
/// identity and next sequence number and hands it to cnats. Runs inside
/// the local `send`, on the sending thread: one atomic increment, the
/// encoding, and the cnats publish call (which copies the frame into the
/// connection's buffer); no lock of the bridge's.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class ExportedPublisher<Value>: Sendable {
    let connection: NATSConnection
    let jetStream: JetStreamContext?
    let codec: NATSCodec<Value>
    let eventIdentity: ObjectIdentifier
    let publisher: UInt64
    let sequence = HeapAtomicWord<UInt64>(0)
    let status: Event<NATSStatus>
    let failures = HeapAtomicWord<Int>(0)

    init(
        connection: NATSConnection, jetStream: JetStreamContext?, codec: NATSCodec<Value>,
        eventIdentity: ObjectIdentifier, status: Event<NATSStatus>
    ) {
        self.connection = connection
        self.jetStream = jetStream
        self.codec = codec
        self.eventIdentity = eventIdentity
        self.status = status
        var publisher: UInt64 = 0
        while publisher == 0 { publisher = UInt64.random(in: .min ... .max) }
        self.publisher = publisher
    }

    /// True when the value being sent arrived from NATS through an import into the same event.
    @inline(__always)
    func isRemoteEcho() -> Bool {
        guard let current = RemoteDelivery.current else { return false }
        return Unmanaged<ImportedSubject>.fromOpaque(current).takeUnretainedValue().eventIdentity == eventIdentity
    }

    func publish(_ value: Value, to subject: String) {
        if isRemoteEcho() { return }
        let number = sequence.wrappingAdd(1, ordering: .relaxed).newValue
        let header = FrameHeader(tag: codec.tag, publisher: publisher, sequence: number)
        codec.withFrame(value, FrameHeader.size) { frame in
            header.write(to: frame)
            let result = subject.withCString { subjectPointer in
                if let jetStream {
                    return jetStream.publish(
                        subject: subjectPointer, frame: UnsafeRawBufferPointer(frame), publisher: publisher,
                        sequence: number)
                }
                return natsConnection_Publish(
                    connection.pointer, subjectPointer, frame.baseAddress, Int32(truncatingIfNeeded: frame.count))
            }
            if result != NATS_OK { reportFailure(subject: subject, result) }
        }
    }

    func reportFailure(subject: String, _ result: natsStatus) {
        failures.wrappingAdd(1, ordering: .relaxed)
        status.send(.publishFailed(subject: subject, error: String(cString: natsStatus_GetText(result))))
    }
}
