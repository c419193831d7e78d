import CNATS
import Foundation

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension JetStreamContext {
    // MARK: Consumers

    /// What an at-least-once import's durable push consumer must be.
    struct ConsumerSpecification {
        var stream: String
        var durable: String
        var filter: String
        var redeliveryWait: Duration
        var heartbeat: Duration
        /// The stream's retention: only under `.limits` may a stalled consumer be deleted
        /// (deleting the consumer of an interest or work-queue stream lets the server drop
        /// the messages it has not acknowledged).
        var retention: NATSStream.Retention

        var deliverSubject: String { "_observer.deliver.\(stream).\(durable)" }
    }

    /// Creates the durable push consumer unless it exists; an existing one must match
    /// `specification`. Returns its deliver subject.
    func ensureConsumer(_ specification: ConsumerSpecification) throws(NATSError) -> String {
        if let problem = NATSNames.assetNameProblem(specification.durable) {
            throw NATSError(
                .invalidOption,
                "durable consumer name \(NATSBridge.abbreviated(specification.durable)) cannot be used: \(problem)")
        }
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(0)
        let found = specification.stream.withCString { streamPointer in
            specification.durable.withCString { js_GetConsumerInfo(&info, pointer, streamPointer, $0, nil, &code) }
        }
        if found == NATS_OK, let info {
            defer { jsConsumerInfo_Destroy(info) }
            let config = info.pointee.Config.pointee
            guard let deliver = config.DeliverSubject.map({ String(cString: $0) }) else {
                throw NATSError(
                    .jetStream,
                    "consumer \(specification.durable) of stream \(specification.stream) is not a push consumer")
            }
            let differences = Self.differences(specification, config)
            guard differences.isEmpty else {
                throw NATSError(
                    .jetStream,
                    "consumer \(specification.durable) of stream \(specification.stream) exists with another "
                        + "configuration: \(differences.joined(separator: "; "))")
            }
            return deliver
        }
        guard found == NATS_NOT_FOUND else {
            throw NATSError.from(found, "looking up consumer \(specification.durable)")!.asJetStream
        }
        try addConsumer(specification, startingAfter: nil)
        return specification.deliverSubject
    }

    static func differences(_ wanted: ConsumerSpecification, _ existing: jsConsumerConfig) -> [String] {
        var differences: [String] = []
        let filter = existing.FilterSubject.map { String(cString: $0) } ?? ""
        if filter != wanted.filter { differences.append("filter subject \"\(filter)\" (wanted \"\(wanted.filter)\")") }
        if existing.AckPolicy != js_AckExplicit { differences.append("acknowledgment policy is not explicit") }
        let ackWait = Int64(wanted.redeliveryWait.wholeMilliseconds) * 1_000_000
        if existing.AckWait != ackWait {
            differences.append(
                "ack wait \(describe(nanoseconds: existing.AckWait)) (wanted \(describe(nanoseconds: ackWait)))")
        }
        let heartbeat = Int64(wanted.heartbeat.wholeMilliseconds) * 1_000_000
        if existing.Heartbeat != heartbeat {
            differences.append(
                "idle heartbeat \(existing.Heartbeat == 0 ? "off" : describe(nanoseconds: existing.Heartbeat)) "
                    + "(wanted \(describe(nanoseconds: heartbeat)))")
        }
        if !existing.FlowControl { differences.append("flow control off (wanted on)") }
        if let group = existing.DeliverGroup.map({ String(cString: $0) }), !group.isEmpty {
            differences.append("deliver group \(group) (wanted none)")
        }
        return differences
    }

    /// Adds the consumer; `startingAfter` a stream sequence delivers from the next one, nil from the first.
    func addConsumer(_ specification: ConsumerSpecification, startingAfter sequence: UInt64?) throws(NATSError) {
        var config = jsConsumerConfig()
        _ = jsConsumerConfig_Init(&config)
        let durablePointer = strdup(specification.durable)
        let filterPointer = strdup(specification.filter)
        let deliverPointer = strdup(specification.deliverSubject)
        defer {
            free(durablePointer)
            free(filterPointer)
            free(deliverPointer)
        }
        config.Durable = UnsafePointer(durablePointer)
        config.FilterSubject = UnsafePointer(filterPointer)
        config.DeliverSubject = UnsafePointer(deliverPointer)
        config.AckPolicy = js_AckExplicit
        if let sequence {
            config.DeliverPolicy = js_DeliverByStartSequence
            config.OptStartSeq = sequence + 1
        } else {
            config.DeliverPolicy = js_DeliverAll
        }
        config.AckWait = Int64(specification.redeliveryWait.wholeMilliseconds) * 1_000_000
        config.Heartbeat = Int64(specification.heartbeat.wholeMilliseconds) * 1_000_000
        config.FlowControl = true
        config.MaxAckPending = 65_536
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(0)
        let added = specification.stream.withCString { js_AddConsumer(&info, pointer, $0, &config, nil, &code) }
        if added == NATS_OK {
            jsConsumerInfo_Destroy(info)
            return
        }
        throw NATSError.from(added, "creating consumer \(specification.durable) (JetStream error \(code.rawValue))")!
            .asJetStream
    }

    /// The recovery of a stalled consumer. A consumer that no longer exists is added again
    /// (from the stream's first message: the import drops what it delivered already). One
    /// that exists is deleted and added again from after its acknowledgment floor under
    /// `.limits` retention; under the others its leadership moves to another server of the
    /// cluster (a single server's is left alone, and the error says why).
    func recreateConsumer(_ specification: ConsumerSpecification) throws(NATSError) {
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(0)
        let found = specification.stream.withCString { streamPointer in
            specification.durable.withCString { js_GetConsumerInfo(&info, pointer, streamPointer, $0, nil, &code) }
        }
        if found == NATS_NOT_FOUND {
            try addConsumer(specification, startingAfter: nil)
            return
        }
        guard found == NATS_OK, let info else {
            throw NATSError.from(found, "looking up stalled consumer \(specification.durable)")!.asJetStream
        }
        let floor = info.pointee.AckFloor.Stream
        let clustered = info.pointee.Cluster.map { $0.pointee.ReplicasLen > 0 } ?? false
        jsConsumerInfo_Destroy(info)
        guard specification.retention == .limits else {
            guard clustered else {
                throw NATSError(
                    .jetStream,
                    "consumer \(specification.durable) stalled; it is not deleted, because its stream's retention "
                        + "is \(specification.retention) and deleting it could drop unacknowledged messages")
            }
            var reply: OpaquePointer?
            let subject = "$JS.API.CONSUMER.LEADER.STEPDOWN.\(specification.stream).\(specification.durable)"
            let result = natsConnection_Request(&reply, connection.pointer, subject, nil, 0, 5000)
            natsMsg_Destroy(reply)
            if let error = NATSError.from(result, "moving stalled consumer \(specification.durable) to another server")
            {
                throw error.asJetStream
            }
            return
        }
        let deleted = specification.stream.withCString { streamPointer in
            specification.durable.withCString { js_DeleteConsumer(pointer, streamPointer, $0, nil, &code) }
        }
        if deleted != NATS_OK && deleted != NATS_NOT_FOUND {
            throw NATSError.from(deleted, "deleting stalled consumer \(specification.durable)")!.asJetStream
        }
        try addConsumer(specification, startingAfter: floor == 0 ? nil : floor)
    }
}
