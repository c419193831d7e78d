import CNATS
import Foundation
import ObserverSwift

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension JetStreamContext {
    // MARK: Retrying

    /// The retry thread: republishes what the queue holds, and each silent subject's messages
    /// when its backoff has passed, in rounds. A round gives up (refused) what the server refused,
    /// what goes to a subject denied lately, and the messages of a subject silent for longer than
    /// ``streamCheckInterval`` whose stream no longer stores it. It reports what it gave up last,
    /// when it holds nothing else: a status observer that closes the bridge from this thread
    /// finds every other message queued or in flight, where the close gives it up.
    func runRetries() {
        while let round = nextRound() {
            var givenUp: [GivenUp] = []
            var batch: [Retry] = []
            for retry in round.ready {
                if case .refused(let reason) = retry.failure {
                    givenUp.append(GivenUp(message: retry.message, reason: reason, isRefused: true))
                } else {
                    batch.append(retry)
                }
            }
            for subject in round.dueSubjects {
                if round.checkedSubjects.contains(subject.name),
                    let reason = unstoredReason(subject.name, stream: subject.stream)
                {
                    givenUp += subject.messages.map { GivenUp(message: $0.message, reason: reason, isRefused: true) }
                    forgetSilence(of: subject.name)
                } else {
                    batch += subject.messages
                }
            }
            batch = takeMessagesToDeniedSubjects(batch, into: &givenUp)
            var retained: [Retry] = []
            var options = jsPubOptions()
            _ = jsPubOptions_Init(&options)
            options.MaxWait = acknowledgmentWait
            for (index, retry) in batch.enumerated() {
                // Destroyed meanwhile (the bridge closed): give up the rest instead of publishing
                // through it.
                if isClosed.load(ordering: .sequentiallyConsistent) {
                    givenUp += batch[index...].map {
                        GivenUp(message: $0.message, reason: Self.closingReason, isRefused: false)
                    }
                    break
                }
                var message: OpaquePointer? = retry.message
                let result = js_PublishMsgAsync(pointer, &message, &options)
                if result == NATS_OK { continue }
                if let message {
                    if Self.isRetryable(publishResult: result) {
                        retained.append(Retry(message: message, failure: .timeout))
                    } else {
                        givenUp.append(GivenUp(message: message, reason: Self.text(result), isRefused: true))
                    }
                }
            }
            if !retained.isEmpty { requeue(retained) }
            giveUp(givenUp)
        }
    }

    /// What one round of the retry thread republishes or gives up.
    struct Round {
        /// The queue's messages (timeouts, refusals).
        var ready: [Retry] = []
        /// Silent subjects whose backoff has passed, with their messages.
        var dueSubjects: [DueSubject] = []
        /// Subjects among `dueSubjects` silent long enough for a stream lookup.
        var checkedSubjects: Set<String> = []
    }

    struct DueSubject {
        var name: String
        var stream: String
        var messages: [Retry]
    }

    /// A message given up, with why.
    struct GivenUp {
        var message: OpaquePointer
        var reason: String
        var isRefused: Bool
    }

    /// Waits until there is something to republish (the queue, or a silent subject whose
    /// backoff has passed) while connected, and takes it; nil once stopped.
    private func nextRound() -> Round? {
        retryCondition.lock()
        defer { retryCondition.unlock() }
        while true {
            if retryState.isStopped { return nil }
            let now = Date()
            if let pauseUntil = retryState.pauseUntil, now < pauseUntil {
                _ = retryCondition.wait(until: pauseUntil)
                continue
            }
            retryState.pauseUntil = nil
            let due = retryState.silent.values.map(\.retryAt).min()
            guard !retryState.queue.isEmpty || (due.map { $0 <= now } ?? false) else {
                if let due { _ = retryCondition.wait(until: due) } else { retryCondition.wait() }
                continue
            }
            // Asked without this lock held: cnats' connection lock is never taken under it.
            retryCondition.unlock()
            let connected = natsConnection_Status(connection.pointer) == NATS_CONN_STATUS_CONNECTED
            retryCondition.lock()
            guard connected else {
                // Down: leave everything as it is and look again in 50 ms.
                retryState.pauseUntil = Date().addingTimeInterval(0.05)
                continue
            }
            if retryState.isStopped { return nil }
            return takeRound(now: Date())
        }
    }

    /// Takes the queue and the messages of every silent subject due by `now`, doubling each
    /// one's backoff (25 ms up to 1 s). Under `retryCondition`'s lock.
    private func takeRound(now: Date) -> Round {
        var round = Round()
        round.ready = retryState.queue
        retryState.queue = []
        let streams = registry.withLock { $0.streamBySubject }
        for (name, var subject) in retryState.silent where subject.retryAt <= now {
            if subject.messages.isEmpty {
                // None of the messages republished last came back silent (yet): once each has
                // had its acknowledgment wait (stored, or timed out and queued), the subject is
                // no longer silent.
                let answered = (subject.lastRepublished ?? .distantPast).addingTimeInterval(
                    Double(acknowledgmentWait) / 1000 + 0.1)
                if now >= answered {
                    retryState.silent[name] = nil
                } else {
                    retryState.silent[name]!.retryAt = answered
                }
                continue
            }
            let stream = streams[name]
            round.dueSubjects.append(DueSubject(name: name, stream: stream ?? "", messages: subject.messages))
            subject.messages = []
            subject.lastRepublished = now
            subject.backoff = min(Self.longestBackoff, subject.backoff * 2)
            subject.retryAt = now.addingTimeInterval(subject.backoff)
            if stream != nil, now.timeIntervalSince(subject.since) > Self.streamCheckInterval,
                now.timeIntervalSince(subject.lastStreamCheck ?? .distantPast) > Self.streamCheckInterval,
                !isClosed.load(ordering: .sequentiallyConsistent)
            {
                subject.lastStreamCheck = now
                round.checkedSubjects.insert(name)
            }
            retryState.silent[name] = subject
        }
        silentSubjects.store(retryState.silent.count, ordering: .relaxed)
        return round
    }

    /// Forgets that `subject` was silent (its messages were given up).
    private func forgetSilence(of subject: String) {
        retryCondition.lock()
        if let silent = retryState.silent[subject], silent.messages.isEmpty { retryState.silent[subject] = nil }
        silentSubjects.store(retryState.silent.count, ordering: .relaxed)
        retryCondition.unlock()
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
        // Not publishable now (the connection's buffer is full, or it is down): wait a little.
        retryState.pauseUntil = Date().addingTimeInterval(0.05)
        retryCondition.unlock()
    }

    /// The first and the longest wait before a silent subject's messages are republished.
    static let firstBackoff: TimeInterval = 0.025
    static let longestBackoff: TimeInterval = 1

    /// How long "no responders" lasts before a stream lookup, and the least time between two.
    static let streamCheckInterval: TimeInterval = 2

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

    /// Moves the messages of `batch` to subjects the server denied lately into `givenUp`;
    /// returns the others.
    private func takeMessagesToDeniedSubjects(_ batch: [Retry], into givenUp: inout [GivenUp]) -> [Retry] {
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
                givenUp.append(GivenUp(message: retry.message, reason: reason, isRefused: true))
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
        giveUp(messages.map { GivenUp(message: $0, reason: reason, isRefused: isRefused) })
    }

    /// Frees the messages of `givenUp`, counts their events (as refused: never stored;
    /// otherwise as unconfirmed) and charges them to their exports, all before reporting them
    /// per subject and reason; settles them after the last report. Returns the count of events.
    ///
    /// The reports wait in ``JetStreamContext/unsentReports`` until sent: a close started by an
    /// observer of one of them sends the others (and settles them) before the bridge's `.closed`.
    @discardableResult
    func giveUp(_ givenUp: [GivenUp]) -> Int {
        guard !givenUp.isEmpty else { return 0 }
        struct ReportKey: Hashable {
            var subject: String
            var reason: String
            var isRefused: Bool
        }
        var byReport: [ReportKey: Int] = [:]
        var byPublisher: [UInt64: (refused: Int, unconfirmed: Int)] = [:]
        var refusedEvents = 0
        var unconfirmedEvents = 0
        for item in givenUp {
            let message = item.message
            let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? ""
            let count = Self.eventCount(of: message)
            if item.isRefused { refusedEvents += count } else { unconfirmedEvents += count }
            byReport[ReportKey(subject: subject, reason: item.reason, isRefused: item.isRefused), default: 0] += count
            var identity: UnsafePointer<CChar>?
            if natsMsgHeader_Get(message, "Nats-Msg-Id", &identity) == NATS_OK, let identity,
                let publisher = UInt64(String(cString: identity).prefix { $0 != "-" }, radix: 16)
            {
                if item.isRefused {
                    byPublisher[publisher, default: (0, 0)].refused += count
                } else {
                    byPublisher[publisher, default: (0, 0)].unconfirmed += count
                }
            }
            natsMsg_Destroy(message)
        }
        let charged = registry.withLock { registry in
            byPublisher.map { identity, counts in (registry.publishers[identity]?.publisher, counts) }
        }
        for case let (publisher?, counts) in charged {
            publisher.failures.wrappingAdd(counts.refused + counts.unconfirmed, ordering: .relaxed)
            if counts.refused > 0 { publisher.refused.wrappingAdd(counts.refused, ordering: .relaxed) }
            if counts.unconfirmed > 0 { publisher.unconfirmed.wrappingAdd(counts.unconfirmed, ordering: .relaxed) }
        }
        if refusedEvents > 0 { refused.wrappingAdd(refusedEvents, ordering: .relaxed) }
        if unconfirmedEvents > 0 { unconfirmed.wrappingAdd(unconfirmedEvents, ordering: .relaxed) }
        let reports = byReport.sorted {
            ($0.key.subject, $0.key.reason, $0.key.isRefused ? 0 : 1) < (
                $1.key.subject, $1.key.reason, $1.key.isRefused ? 0 : 1
            )
        }.map { key, count -> NATSStatus in
            key.isRefused
                ? .refused(subject: key.subject, count: count, reason: key.reason)
                : .unconfirmed(subject: key.subject, count: count, reason: key.reason)
        }
        let identity = unsentReports.withLock { unsent -> Int in
            unsent.nextIdentity += 1
            unsent.batches[unsent.nextIdentity] = UnsentReports(statuses: reports[...], unsettled: givenUp.count)
            return unsent.nextIdentity
        }
        while true {
            let next = unsentReports.withLock { unsent -> (status: NATSStatus?, settle: Int) in
                guard var batch = unsent.batches[identity] else { return (nil, 0) }
                if let status = batch.statuses.popFirst() {
                    unsent.batches[identity] = batch
                    return (status, 0)
                }
                unsent.batches[identity] = nil
                return (nil, batch.unsettled)
            }
            if let status = next.status {
                self.status.send(status)
                continue
            }
            // Settled last: a flush that sees nothing pending sees these reports made. (Taken
            // by a close meanwhile, they were sent and settled by it: nothing is left here.)
            if next.settle > 0 { settle(next.settle, acknowledged: false) }
            break
        }
        return refusedEvents + unconfirmedEvents
    }

    /// Sends every report still unsent (a close's, before the bridge reports `.closed`), and
    /// settles its messages.
    func sendUnsentReports() {
        let batches = unsentReports.withLock { unsent -> [UnsentReports] in
            defer { unsent.batches = [:] }
            return unsent.batches.sorted { $0.key < $1.key }.map(\.value)
        }
        for batch in batches {
            for status in batch.statuses { self.status.send(status) }
            settle(batch.unsettled, acknowledged: false)
        }
    }
}
