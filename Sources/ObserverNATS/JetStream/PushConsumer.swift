import CNATS
import Foundation
import ObserverSwift

/// An at-least-once import's durable push consumer, between cnats and the
/// ``ImportedSubject``: answers the server's flow-control requests, takes its idle
/// heartbeats, hands every other message to the import, and watches the consumer.
///
/// The consumer sends an idle heartbeat every `heartbeat` when it has nothing to
/// deliver. While the connection is up, three intervals without a message or a
/// heartbeat mean the consumer stalled (a server can stop pushing after a leader
/// change): the watch reports ``NATSStatus/consumerStalled(subject:durable:)``,
/// deletes the consumer and adds it again from its acknowledgment floor (the import
/// drops what it delivered already), and reports
/// ``NATSStatus/consumerRecovered(subject:durable:)`` at the next message or heartbeat.
/// While the connection is down nothing is judged: the client reports that itself.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class PushConsumer: @unchecked Sendable {
    // @unchecked: `importedClosure` is immutable (cnats' reference to `imported`); every
    // other stored property is immutable, atomic, or guarded by `watchState`'s lock.
    let imported: ImportedSubject
    /// The retained reference cnats' on-complete callback gives back to the import.
    let importedClosure: UnsafeMutableRawPointer
    let connection: NATSConnection
    let jetStream: JetStreamContext
    let specification: JetStreamContext.ConsumerSpecification
    let status: Event<NATSStatus>
    /// Uptime (ns) of the last message or heartbeat.
    let lastActivity = HeapAtomicWord<UInt64>(DispatchTime.now().uptimeNanoseconds)
    /// How long without activity is a stall (three heartbeat intervals), in ns.
    let stallAfter: UInt64
    private let watchState = Locked(WatchState())
    /// The watch's timer: made and resumed by `startWatching()` (libdispatch must not release a
    /// source that was never resumed), cancelled by `stopWatching()`.
    private let timer = Locked<DispatchSourceTimer?>(nil)

    struct WatchState {
        /// Uptime when the stall was reported; nil while the consumer delivers.
        var stalledAt: UInt64?
        /// No stall is judged before this uptime (after a disconnection or a recreation).
        var excusedUntil: UInt64 = 0
    }

    init(
        imported: ImportedSubject, connection: NATSConnection, jetStream: JetStreamContext,
        specification: JetStreamContext.ConsumerSpecification, status: Event<NATSStatus>
    ) {
        self.imported = imported
        self.importedClosure = Unmanaged.passRetained(imported).toOpaque()
        self.connection = connection
        self.jetStream = jetStream
        self.specification = specification
        self.status = status
        self.stallAfter = UInt64(max(1, specification.heartbeat.wholeMilliseconds)) * 3_000_000
    }

    /// Starts watching, every heartbeat interval, on a queue of its own (a recovery waits
    /// for JetStream requests).
    func startWatching() {
        let interval = DispatchTimeInterval.milliseconds(Int(max(1, specification.heartbeat.wholeMilliseconds)))
        let source = DispatchSource.makeTimerSource(
            queue: DispatchQueue(label: "ObserverNATS.consumer.\(specification.durable)"))
        source.schedule(deadline: .now() + interval, repeating: interval)
        source.setEventHandler { [weak self] in self?.check() }
        timer.withLock { $0 = source }
        source.resume()
    }

    func stopWatching() {
        timer.withLock { $0 }?.cancel()
    }

    private func check() {
        let now = DispatchTime.now().uptimeNanoseconds
        let last = lastActivity.load(ordering: .relaxed)
        let subject = imported.subject
        let durable = specification.durable
        let connected = natsConnection_Status(connection.pointer) == NATS_CONN_STATUS_CONNECTED
        let verdict = watchState.withLock { state -> Verdict in
            if !connected {
                state.excusedUntil = now + stallAfter
                return .none
            }
            if let stalledAt = state.stalledAt, last > stalledAt {
                state.stalledAt = nil
                return .recovered
            }
            guard now >= state.excusedUntil, now &- last >= stallAfter else { return .none }
            let first = state.stalledAt == nil
            if first { state.stalledAt = now }
            return first ? .stalled : .stillStalled
        }
        switch verdict {
        case .none: return
        case .recovered:
            status.send(.consumerRecovered(subject: subject, durable: durable))
            return
        case .stalled:
            status.send(.consumerStalled(subject: subject, durable: durable))
        case .stillStalled: break
        }
        // An observer of the status may have closed the bridge (which stopped this watch and
        // destroys the JetStream context): recover only while watching.
        guard timer.withLock({ $0.map { !$0.isCancelled } ?? false }) else { return }
        do {
            try jetStream.recreateConsumer(specification)
        } catch {
            status.send(.error("recreating the stalled consumer \(durable): \(error.message)"))
        }
        let after = DispatchTime.now().uptimeNanoseconds
        watchState.withLock { $0.excusedUntil = after + stallAfter }
    }

    enum Verdict { case none, recovered, stalled, stillStalled }

    /// cnats' message callback: `closure` is a `PushConsumer`.
    static let onMessage: natsMsgHandler = { connection, subscription, message, closure in
        guard let message, let closure else {
            natsMsg_Destroy(message)
            return
        }
        let consumer = Unmanaged<PushConsumer>.fromOpaque(closure).takeUnretainedValue()
        consumer.lastActivity.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
        var code: UnsafePointer<CChar>?
        if natsMsgHeader_Get(message, "Status", &code) == NATS_OK, let code, strcmp(code, "100") == 0 {
            consumer.answerControl(message)
            natsMsg_Destroy(message)
            return
        }
        ImportedSubject.onMessage(connection, subscription, message, consumer.importedClosure)
    }

    /// cnats' on-complete callback: gives back cnats' references to this and to the import.
    static let onComplete: natsOnCompleteCB = { closure in
        guard let closure else { return }
        let consumer = Unmanaged<PushConsumer>.fromOpaque(closure).takeRetainedValue()
        ImportedSubject.onComplete(consumer.importedClosure)
    }

    /// A flow-control request (it has a reply subject) is answered at once: this runs after
    /// every message the server sent before it was handled. A heartbeat that says the
    /// consumer waits on flow control names the subject to answer in `Nats-Consumer-Stalled`.
    private func answerControl(_ message: OpaquePointer) {
        if let reply = natsMsg_GetReply(message), reply.pointee != 0 {
            _ = natsConnection_Publish(connection.pointer, reply, nil, 0)
        }
        var stalled: UnsafePointer<CChar>?
        if natsMsgHeader_Get(message, "Nats-Consumer-Stalled", &stalled) == NATS_OK, let stalled, stalled.pointee != 0 {
            _ = natsConnection_Publish(connection.pointer, stalled, nil, 0)
        }
    }
}
