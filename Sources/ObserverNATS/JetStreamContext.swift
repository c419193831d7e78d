import CNATS
import Foundation
import ObserverSwift

/// A JetStream stream that at-least-once exports publish into and
/// at-least-once imports consume from. ``NATSBridge`` creates it when it
/// does not exist yet (file storage).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public struct NATSStream: Sendable, Equatable {
    /// The stream's name: letters, digits, `-` and `_`.
    public var name: String
    /// The subjects the stream stores (wildcards allowed).
    public var subjects: [String]
    /// How long the server remembers message IDs to drop republished duplicates.
    public var duplicateWindow: Duration

    public init(name: String, subjects: [String], duplicateWindow: Duration = .seconds(120)) {
        self.name = name
        self.subjects = subjects
        self.duplicateWindow = duplicateWindow
    }
}

/// How an export publishes and how an import receives.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public enum NATSDelivery: Sendable, Equatable {
    /// Core NATS: fastest; a message published while no server holds the import's
    /// subscription is lost, and imports report every lost message as a
    /// ``NATSStatus/gap(subject:publisher:missed:)``.
    case atMostOnce
    /// JetStream: exports publish into `stream` and republish until the server
    /// acknowledges; imports consume through the durable consumer `durable`,
    /// acknowledge after local delivery, and deliver each message to observers once.
    case atLeastOnce(stream: NATSStream, durable: String = "", redeliveryWait: Duration = .seconds(2))
}

/// One `jsCtx` with asynchronous publishing that republishes until acknowledged.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class JetStreamContext: @unchecked Sendable {
    // @unchecked: `pointer` is immutable; cnats' jsCtx functions are thread-safe.
    let pointer: OpaquePointer
    let connection: NATSConnection
    /// How long an asynchronous publish waits for its acknowledgment before it is republished.
    let acknowledgmentWait: Int64

    init(connection: NATSConnection, acknowledgmentWait: Duration = .seconds(1)) throws(NATSError) {
        self.connection = connection
        self.acknowledgmentWait = acknowledgmentWait.wholeMilliseconds
        var options = jsOptions()
        try NATSError.check(jsOptions_Init(&options), "initializing JetStream options")
        options.Wait = 5000
        options.PublishAsync.MaxPending = 1 << 20
        options.PublishAsync.StallWait = 1000
        options.PublishAsync.ErrHandler = JetStreamContext.republish
        // The closure carries the acknowledgment wait itself, so the callback needs no object.
        options.PublishAsync.ErrHandlerClosure = UnsafeMutableRawPointer(bitPattern: Int(self.acknowledgmentWait))
        var context: OpaquePointer?
        try NATSError.check(
            natsConnection_JetStream(&context, connection.pointer, &options), "creating a JetStream context")
        pointer = context!
    }

    /// Set by `close()`: publishes after it fail with `NATS_CONNECTION_CLOSED`.
    let isClosed = HeapAtomicWord<Bool>(false)
    /// Publishes inside `js_PublishAsync` now: `close()` waits for none before destroying.
    let publishing = HeapAtomicWord<Int>(0)
    let isDestroyed = HeapAtomicWord<Bool>(false)

    deinit {
        if !isDestroyed.exchange(true, ordering: .relaxed) {
            NATSConnection.destroy(pointer) { jsCtx_Destroy($0) }
        }
    }

    /// Destroys the context now (the bridge is closing), so that cnats' acknowledgment
    /// subscription and its thread go with the connection, not whenever the last export
    /// closure happens to be released.
    func close() {
        // Sequentially consistent with `publish`: either it sees the flag, or this sees its count.
        isClosed.store(true, ordering: .sequentiallyConsistent)
        while publishing.load(ordering: .sequentiallyConsistent) > 0 { sched_yield() }
        if !isDestroyed.exchange(true, ordering: .acquiringAndReleasing) { jsCtx_Destroy(pointer) }
    }

    /// cnats' publish-error callback: the acknowledgment did not come in time
    /// (the server was gone) or the server answered with an error; publish
    /// again. The message keeps its `Nats-Msg-Id`, so a server that stored it
    /// already drops the copy.
    static let republish: jsPubAckErrHandler = { context, failure, closure in
        guard let context, let failure else { return }
        if failure.pointee.Err == NATS_NO_RESPONDERS {
            // No JetStream behind the subject yet (a server still starting): do not spin.
            usleep(10_000)
        }
        var options = jsPubOptions()
        _ = jsPubOptions_Init(&options)
        options.MaxWait = Int64(Int(bitPattern: closure))
        _ = js_PublishMsgAsync(context, &failure.pointee.Msg, &options)
    }

    func publish(
        subject: UnsafePointer<CChar>, frame: UnsafeRawBufferPointer, publisher: UInt64, sequence: UInt64
    ) -> natsStatus {
        publishing.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer { publishing.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
        if isClosed.load(ordering: .sequentiallyConsistent) { return NATS_CONNECTION_CLOSED }
        var options = jsPubOptions()
        _ = jsPubOptions_Init(&options)
        options.MaxWait = acknowledgmentWait
        let identity = String(publisher, radix: 16) + "-" + String(sequence)
        return identity.withCString { identityPointer in
            options.MsgId = identityPointer
            return js_PublishAsync(pointer, subject, frame.baseAddress, Int32(frame.count), &options)
        }
    }

    /// Creates `stream` unless a stream of that name exists.
    func ensure(_ stream: NATSStream) throws(NATSError) {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let found = stream.name.withCString { js_GetStreamInfo(&info, pointer, $0, nil, &code) }
        if found == NATS_OK {
            jsStreamInfo_Destroy(info)
            return
        }
        guard found == NATS_NOT_FOUND else {
            throw NATSError.from(found, "looking up stream \(stream.name)")!.asJetStream
        }
        var config = jsStreamConfig()
        _ = jsStreamConfig_Init(&config)
        let name = strdup(stream.name)
        let subjects = stream.subjects.map { UnsafePointer(strdup($0)) }
        defer {
            free(name)
            subjects.forEach { free(UnsafeMutablePointer(mutating: $0)) }
        }
        config.Name = UnsafePointer(name)
        config.Storage = js_FileStorage
        config.Duplicates = Int64(stream.duplicateWindow.wholeMilliseconds) * 1_000_000
        let added = subjects.withUnsafeBufferPointer { buffer -> natsStatus in
            config.Subjects = UnsafeMutablePointer(mutating: buffer.baseAddress)
            config.SubjectsLen = Int32(buffer.count)
            return js_AddStream(&info, pointer, &config, nil, &code)
        }
        if added == NATS_OK {
            jsStreamInfo_Destroy(info)
            return
        }
        throw NATSError.from(added, "creating stream \(stream.name) (JetStream error \(code.rawValue))")!.asJetStream
    }

    /// Creates the durable push consumer unless it exists; returns its deliver subject.
    func ensureConsumer(
        stream: String, durable: String, filter: String, redeliveryWait: Duration
    ) throws(NATSError) -> String {
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(0)
        let found = stream.withCString { streamPointer in
            durable.withCString { js_GetConsumerInfo(&info, pointer, streamPointer, $0, nil, &code) }
        }
        if found == NATS_OK, let info {
            let deliver = info.pointee.Config.pointee.DeliverSubject.map { String(cString: $0) }
            jsConsumerInfo_Destroy(info)
            if let deliver { return deliver }
            throw NATSError(.jetStream, "consumer \(durable) of stream \(stream) is not a push consumer")
        }
        guard found == NATS_NOT_FOUND else {
            throw NATSError.from(found, "looking up consumer \(durable)")!.asJetStream
        }
        let deliver = "_observer.deliver.\(stream).\(durable)"
        var config = jsConsumerConfig()
        _ = jsConsumerConfig_Init(&config)
        let durablePointer = strdup(durable)
        let filterPointer = strdup(filter)
        let deliverPointer = strdup(deliver)
        defer {
            free(durablePointer)
            free(filterPointer)
            free(deliverPointer)
        }
        config.Durable = UnsafePointer(durablePointer)
        config.FilterSubject = UnsafePointer(filterPointer)
        config.DeliverSubject = UnsafePointer(deliverPointer)
        config.AckPolicy = js_AckExplicit
        config.DeliverPolicy = js_DeliverAll
        config.AckWait = Int64(redeliveryWait.wholeMilliseconds) * 1_000_000
        config.MaxAckPending = 65_536
        let added = stream.withCString { js_AddConsumer(&info, pointer, $0, &config, nil, &code) }
        if added == NATS_OK {
            jsConsumerInfo_Destroy(info)
            return deliver
        }
        throw NATSError.from(added, "creating consumer \(durable) (JetStream error \(code.rawValue))")!.asJetStream
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSError {
    var asJetStream: NATSError {
        kind == .client ? NATSError(.jetStream, message, status: status) : self
    }
}
