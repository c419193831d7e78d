import CNATS
import Foundation
import ObserverSwift

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension JetStreamContext {
    // MARK: Retrying

    func runRetries() {
        var backoff = 0.0
        var lastStreamCheck = Date()
        var noRespondersSince: Date?
        while true {
            retryCondition.lock()
            while retryState.queue.isEmpty && !retryState.isStopped { retryCondition.wait() }
            if backoff > 0 && !retryState.isStopped {
                let until = Date().addingTimeInterval(backoff)
                while !retryState.isStopped && Date() < until { _ = retryCondition.wait(until: until) }
            }
            if retryState.isStopped {
                retryCondition.unlock()
                return
            }
            retryCondition.unlock()
            // Asked without this lock held: cnats' connection lock is never taken under it.
            guard natsConnection_Status(connection.pointer) == NATS_CONN_STATUS_CONNECTED else {
                // Down: leave the queue as it is and look again in 50 ms.
                backoff = 0.05
                continue
            }
            retryCondition.lock()
            var batch = retryState.queue
            retryState.queue = []
            retryCondition.unlock()
            let sawNoResponders = batch.contains { $0.failure == .noResponders }
            batch.removeAll { retry in
                guard case .refused(let reason) = retry.failure else { return false }
                drop([retry.message], reason: reason, refused: true)
                return true
            }
            batch = dropMessagesToDeniedSubjects(batch)
            // "No responders" for a while: an election, or no stream stores the subject any more.
            if sawNoResponders, !isClosed.load(ordering: .sequentiallyConsistent), let since = noRespondersSince,
                Date().timeIntervalSince(since) > Self.streamCheckInterval,
                Date().timeIntervalSince(lastStreamCheck) > Self.streamCheckInterval
            {
                lastStreamCheck = Date()
                batch = dropMessagesOfMissingStreams(batch)
            }
            var retained: [Retry] = []
            var options = jsPubOptions()
            _ = jsPubOptions_Init(&options)
            options.MaxWait = acknowledgmentWait
            for (index, retry) in batch.enumerated() {
                // A status observer on this thread may have closed the bridge, which destroyed
                // the context: give up the rest instead of publishing through it.
                if isClosed.load(ordering: .sequentiallyConsistent) {
                    drop(batch[index...].map(\.message), reason: Self.closingReason, refused: false)
                    break
                }
                var message: OpaquePointer? = retry.message
                let result = js_PublishMsgAsync(pointer, &message, &options)
                if result == NATS_OK { continue }
                if let message {
                    if Self.isRetryable(publishResult: result) {
                        retained.append(Retry(message: message, failure: .timeout))
                    } else {
                        drop([message], reason: String(cString: natsStatus_GetText(result)), refused: true)
                    }
                }
            }
            if !retained.isEmpty { requeue(retained) }
            let acknowledged = acknowledgedSinceRetry.exchange(false, ordering: .relaxed)
            if sawNoResponders && !acknowledged {
                backoff = min(1, max(0.025, backoff * 2))
                if noRespondersSince == nil { noRespondersSince = Date() }
            } else {
                backoff = retained.isEmpty ? 0 : 0.05
                if acknowledged { noRespondersSince = nil }
            }
        }
    }

    private func requeue(_ retries: [Retry]) {
        retryCondition.lock()
        if retryState.isStopped {
            retryState.droppedWhileClosing += retries.reduce(0) { $0 + Self.eventCount(of: $1.message) }
            retryCondition.unlock()
            drop(retries.map(\.message), reason: Self.closingReason, refused: false)
            return
        }
        retryState.queue.insert(contentsOf: retries, at: 0)
        retryCondition.unlock()
    }

    /// How long "no responders" lasts before a stream lookup, and the least time between two.
    static let streamCheckInterval: TimeInterval = 2

    /// Gives up the messages of `batch` that no stream will store: their stream no longer
    /// exists, or no longer stores their subject (the stream lookup by subject, asked once per
    /// subject); returns the others. A lookup that fails (no answer, an election of the
    /// cluster's meta leader) gives up nothing.
    private func dropMessagesOfMissingStreams(_ batch: [Retry]) -> [Retry] {
        let streams = registry.withLock { $0.streamBySubject }
        var verdicts: [String: String?] = [:]
        var kept: [Retry] = []
        for retry in batch {
            let subject = natsMsg_GetSubject(retry.message).map { String(cString: $0) } ?? ""
            guard let stream = streams[subject] else {
                kept.append(retry)
                continue
            }
            if verdicts[subject] == nil { verdicts[subject] = .some(unstoredReason(subject, stream: stream)) }
            if case .some(.some(let reason)) = verdicts[subject] {
                drop([retry.message], reason: reason, refused: true)
            } else {
                kept.append(retry)
            }
        }
        return kept
    }

    /// Why `subject`'s messages will never be stored in `stream`, or nil when they may be.
    private func unstoredReason(_ subject: String, stream: String) -> String? {
        // Closed by an observer of a status this thread sent: the context is gone.
        if isClosed.load(ordering: .sequentiallyConsistent) { return nil }
        guard let names = try? streams(storing: subject), !names.contains(stream) else { return nil }
        if !streamExists(stream) { return "stream \(stream) does not exist" }
        return "stream \(stream) no longer stores \(subject)"
    }

    /// Records that the server refused a publish to `subject` for `reason` (a permission).
    func noteDenied(_ subject: String, reason: String) {
        registry.withLock { $0.deniedSubjects[SubjectBytes(subject)] = (reason, Date()) }
        retryCondition.lock()
        retryCondition.signal()
        retryCondition.unlock()
    }

    /// Gives up the messages of `batch` to subjects the server denied lately; returns the others.
    private func dropMessagesToDeniedSubjects(_ batch: [Retry]) -> [Retry] {
        let now = Date()
        let denied = registry.withLock { registry -> [SubjectBytes: String] in
            registry.deniedSubjects = registry.deniedSubjects.filter {
                now.timeIntervalSince($0.value.at) < Self.denialMemory
            }
            return registry.deniedSubjects.mapValues(\.reason)
        }
        guard !denied.isEmpty else { return batch }
        var kept: [Retry] = []
        for retry in batch {
            let subject = natsMsg_GetSubject(retry.message).map { String(cString: $0) } ?? ""
            if let reason = denied[SubjectBytes(subject)] {
                drop([retry.message], reason: reason, refused: true)
            } else {
                kept.append(retry)
            }
        }
        return kept
    }

    /// False only when the server answers that no stream of that name exists.
    private func streamExists(_ name: String) -> Bool {
        // Closed by an observer of a status this thread sent: the context is gone.
        if isClosed.load(ordering: .sequentiallyConsistent) { return true }
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let found = name.withCString { js_GetStreamInfo(&info, pointer, $0, nil, &code) }
        if found == NATS_OK { jsStreamInfo_Destroy(info) }
        return found != NATS_NOT_FOUND
    }

    /// The events `message` carries: a batch frame's count, otherwise 1.
    static func eventCount(of message: OpaquePointer) -> Int {
        let frame = UnsafeRawBufferPointer(start: natsMsg_GetData(message), count: Int(natsMsg_GetDataLength(message)))
        return BatchFrameHeader.eventCount(of: frame)
    }

    /// Frees `messages`, counts their events given up (as refused: never stored; otherwise as
    /// unconfirmed), charges them to their exports and reports them per subject; returns the
    /// count of events.
    @discardableResult
    func drop(_ messages: [OpaquePointer], reason: String, refused isRefused: Bool) -> Int {
        guard !messages.isEmpty else { return 0 }
        var bySubject: [String: Int] = [:]
        var byPublisher: [UInt64: Int] = [:]
        var events = 0
        for message in messages {
            let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? ""
            let count = Self.eventCount(of: message)
            events += count
            bySubject[subject, default: 0] += count
            var identity: UnsafePointer<CChar>?
            if natsMsgHeader_Get(message, "Nats-Msg-Id", &identity) == NATS_OK, let identity,
                let publisher = UInt64(String(cString: identity).prefix { $0 != "-" }, radix: 16)
            {
                byPublisher[publisher, default: 0] += count
            }
            natsMsg_Destroy(message)
        }
        let charged = registry.withLock { registry in
            byPublisher.map { identity, count in (registry.publishers[identity]?.publisher, count) }
        }
        for case let (publisher?, count) in charged {
            publisher.failures.wrappingAdd(count, ordering: .relaxed)
            if isRefused {
                publisher.refused.wrappingAdd(count, ordering: .relaxed)
            } else {
                publisher.unconfirmed.wrappingAdd(count, ordering: .relaxed)
            }
        }
        if isRefused {
            refused.wrappingAdd(events, ordering: .relaxed)
        } else {
            unconfirmed.wrappingAdd(events, ordering: .relaxed)
        }
        for (subject, count) in bySubject.sorted(by: { $0.key < $1.key }) {
            status.send(
                isRefused
                    ? .refused(subject: subject, count: count, reason: reason)
                    : .unconfirmed(subject: subject, count: count, reason: reason))
        }
        // Settled last: a flush that sees nothing pending sees these reports made.
        settle(messages.count, acknowledged: false)
        return events
    }
}
