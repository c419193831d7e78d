import CNATS
import Foundation
import ObserverSwift

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension JetStreamContext {
    // MARK: Publishing

    /// Publishes `frame` to `subject` with the message ID `publisher-sequence`. A publish
    /// the connection cannot take now (reconnect buffer full) is queued for the retry
    /// thread and counts as accepted. Returns nil, or why the publish failed.
    func publish(
        subject: UnsafePointer<CChar>, frame: UnsafeRawBufferPointer, publisher: UInt64, sequence: UInt64
    ) -> String? {
        publishing.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer { publishing.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
        if isClosed.load(ordering: .sequentiallyConsistent) { return Self.text(NATS_CONNECTION_CLOSED) }
        if pending.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue > maxPending {
            settle(1, acknowledged: false)
            return "\(maxPending) publishes are unacknowledged already (NATSOptions.maxPendingPublishes)"
        }
        var message: OpaquePointer?
        var result = natsMsg_Create(&message, subject, nil, frame.baseAddress, Int32(frame.count))
        if result == NATS_OK {
            let identity = String(publisher, radix: 16) + "-" + String(sequence)
            result = natsMsgHeader_Set(message, "Nats-Msg-Id", identity)
        }
        guard result == NATS_OK else {
            natsMsg_Destroy(message)
            settle(1, acknowledged: false)
            return Self.text(result)
        }
        var options = jsPubOptions()
        _ = jsPubOptions_Init(&options)
        options.MaxWait = acknowledgmentWait
        if !hasPublished.load(ordering: .relaxed) { hasPublished.store(true, ordering: .sequentiallyConsistent) }
        result = js_PublishMsgAsync(pointer, &message, &options)
        if result == NATS_OK { return nil }
        if let message, Self.isRetryable(publishResult: result) {
            if enqueueUnlessClosing(message, .timeout) { return nil }
            // Closing: given up and counted as `drop` counts it, but reported by the caller
            // (as a failed publish, after releasing its own locks) rather than here: a status
            // observer run inside the caller's batch lock that sends to the same export would
            // wait for that lock forever.
            let events = Self.eventCount(of: message)
            let charged = registry.withLock { $0.publishers[publisher]?.publisher }
            charged?.unconfirmed.wrappingAdd(events, ordering: .relaxed)
            unconfirmed.wrappingAdd(events, ordering: .relaxed)
            natsMsg_Destroy(message)
            settle(1, acknowledged: false)
            return Self.closingReason
        }
        natsMsg_Destroy(message)
        settle(1, acknowledged: false)
        return Self.text(result)
    }

    static func text(_ status: natsStatus) -> String { String(cString: natsStatus_GetText(status)) }

    /// Results of `js_PublishMsgAsync` that a later attempt may not get.
    static func isRetryable(publishResult: natsStatus) -> Bool {
        switch publishResult {
        case NATS_INSUFFICIENT_BUFFER, NATS_TIMEOUT, NATS_CONNECTION_DISCONNECTED, NATS_NOT_YET_CONNECTED,
            NATS_NO_SERVER, NATS_STALE_CONNECTION:
            true
        default: false
        }
    }

    /// cnats' acknowledgment callback (its acknowledgment thread, or its timer thread for a
    /// timeout): frees an acknowledged message, queues a failed one. Never waits.
    static let acknowledged: jsPubAckHandler = { _, message, acknowledgment, failure, closure in
        guard let closure, let message else { return }
        let context = Unmanaged<JetStreamContext>.fromOpaque(closure).takeUnretainedValue()
        guard acknowledgment == nil, let failure else {
            if context.silentSubjects.load(ordering: .relaxed) > 0 { context.noteStored(message) }
            natsMsg_Destroy(message)
            context.settle(1, acknowledged: true)
            return
        }
        context.enqueue(message, classify(failure.pointee))
    }

    /// JetStream error codes of a cluster that is electing or recovering: worth republishing.
    static let transientErrorCodes: Set<UInt32> = [
        JSClusterNotAvailErr.rawValue, JSClusterNotLeaderErr.rawValue, JSStreamOfflineErr.rawValue,
    ]

    static func classify(_ failure: jsPubAckErr) -> Failure {
        switch failure.Err {
        case NATS_NO_RESPONDERS: return .noResponders
        case NATS_TIMEOUT, NATS_CONNECTION_DISCONNECTED, NATS_CONNECTION_CLOSED, NATS_NOT_YET_CONNECTED,
            NATS_STALE_CONNECTION, NATS_NO_SERVER:
            return .timeout
        default:
            let code = failure.ErrCode.rawValue
            if code == 0 || transientErrorCodes.contains(code) { return .timeout }
            let text = failure.ErrText.map { String(cString: $0) } ?? String(cString: natsStatus_GetText(failure.Err))
            return .refused("\(text) (JetStream error \(code))")
        }
    }

    /// Takes `message` into the retry queue and returns true, or returns false (taking nothing)
    /// when the context is closing. For the sending thread.
    private func enqueueUnlessClosing(_ message: OpaquePointer, _ failure: Failure) -> Bool {
        retryCondition.lock()
        defer { retryCondition.unlock() }
        if retryState.isStopped { return false }
        retryState.queue.append(Retry(message: message, failure: failure))
        retryCondition.signal()
        return true
    }

    /// Takes `message` into the retry queue, or into its subject's silent messages after "no
    /// responders" (or gives it up when the context is closing).
    private func enqueue(_ message: OpaquePointer, _ failure: Failure) {
        let subject = failure == .noResponders ? natsMsg_GetSubject(message).map { String(cString: $0) } : nil
        retryCondition.lock()
        if retryState.isStopped {
            retryState.droppedWhileClosing += Self.eventCount(of: message)
            retryCondition.unlock()
            drop([message], reason: Self.closingReason, refused: false)
            return
        }
        if let subject {
            let retry = Retry(message: message, failure: failure)
            if retryState.silent[subject] != nil {
                retryState.silent[subject]!.messages.append(retry)
            } else {
                let now = Date()
                retryState.silent[subject] = SilentSubject(
                    messages: [retry], since: now, backoff: Self.firstBackoff,
                    retryAt: now.addingTimeInterval(Self.firstBackoff))
                silentSubjects.store(retryState.silent.count, ordering: .relaxed)
                retryCondition.signal()
            }
        } else {
            retryState.queue.append(Retry(message: message, failure: failure))
            retryCondition.signal()
        }
        retryCondition.unlock()
    }

    /// `message` was stored: its subject, if silent, is not any more, and its messages are
    /// republished at once.
    private func noteStored(_ message: OpaquePointer) {
        guard let subject = natsMsg_GetSubject(message).map({ String(cString: $0) }) else { return }
        retryCondition.lock()
        if let silent = retryState.silent.removeValue(forKey: subject) {
            retryState.queue += silent.messages
            silentSubjects.store(retryState.silent.count, ordering: .relaxed)
            if !silent.messages.isEmpty { retryCondition.signal() }
        }
        retryCondition.unlock()
    }

    static let closingReason = "not acknowledged by the server when the bridge closed"

    /// Counts `count` publishes as settled (acknowledged or given up) and wakes flushers at 0.
    func settle(_ count: Int, acknowledged: Bool) {
        let remaining = pending.wrappingSubtract(count, ordering: .sequentiallyConsistent).newValue
        // Sequentially consistent with `waitForAcknowledgments`: either this sees its waiter
        // count, or it sees this decrement before it waits (and it waits under the lock this takes).
        if remaining == 0 && flushWaiters.load(ordering: .sequentiallyConsistent) > 0 {
            settledCondition.lock()
            settledCondition.broadcast()
            settledCondition.unlock()
        }
    }

    /// Waits until no publish is pending or `deadline` passes; returns how many are pending.
    func waitForAcknowledgments(until deadline: Date) -> Int {
        flushWaiters.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer { flushWaiters.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
        settledCondition.lock()
        while pending.load(ordering: .sequentiallyConsistent) > 0 && Date() < deadline {
            _ = settledCondition.wait(until: min(deadline, Date().addingTimeInterval(0.25)))
        }
        settledCondition.unlock()
        return max(0, pending.load(ordering: .sequentiallyConsistent))
    }

    /// Records which stream `subject` publishes into and which publisher publishes it.
    func register(_ publisher: ExportedPublisher, stream: String) {
        registry.withLock { registry in
            registry.streamBySubject[publisher.subject] = stream
            registry.publishers[publisher.publisher] = PublisherReference(publisher: publisher)
        }
    }
}
