import CNATS
import Foundation
import ObserverSwift

/// A JetStream stream that at-least-once exports publish into and
/// at-least-once imports consume from. ``NATSBridge`` creates it when it
/// does not exist yet. When a stream of that name exists, the bridge binds to it: every setting
/// stated here must match the server's (a difference is an error naming it, and the stream is
/// not changed), and every setting left nil is the server's, whatever it is.
///
/// ```swift
/// let orders = NATSStream(
///     name: "ORDERS", subjects: ["orders.>"], replicas: 3, storage: .file, retention: .limits,
///     maxAge: .seconds(24 * 3600))
/// // Binds to ORDERS as it is configured (R3 or not), as long as it stores orders.>:
/// let existing = NATSStream(name: "ORDERS", subjects: ["orders.>"])
/// ```
///
/// The name goes into the subjects of the JetStream API, so it follows nats-server's rules for
/// stream names: 1 to 255 bytes; no whitespace, no control character, no `.`, `*`, `>`, `/` or
/// `\`. A name that breaks one is refused before anything is sent, with
/// ``NATSError/Kind/invalidOption`` and the rule it breaks.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public struct NATSStream: Sendable, Equatable {
    /// The stream's name (see the rules above); letters, digits, `-` and `_` are always safe.
    public var name: String
    /// The subjects the stream stores (wildcards allowed). Always compared with an existing stream's.
    public var subjects: [String]
    /// How long the server remembers message IDs to drop republished duplicates.
    /// Nil: an existing stream's; 120 s for a stream the bridge creates.
    public var duplicateWindow: Duration?
    /// Copies of every message the cluster keeps (1 to 5; more than 1 needs a cluster).
    /// Nil: an existing stream's; 1 for a stream the bridge creates.
    public var replicas: Int?
    /// Where the servers keep the messages. Nil: an existing stream's; ``Storage/file`` for a
    /// stream the bridge creates.
    public var storage: Storage?
    /// When the servers remove messages. Nil: an existing stream's; ``Retention/limits`` for a
    /// stream the bridge creates.
    public var retention: Retention?
    /// How long a message is kept at most; `.zero` states that messages have no age limit.
    /// Nil: an existing stream's; no age limit for a stream the bridge creates.
    public var maxAge: Duration?

    public init(
        name: String, subjects: [String], duplicateWindow: Duration? = nil, replicas: Int? = nil,
        storage: Storage? = nil, retention: Retention? = nil, maxAge: Duration? = nil
    ) {
        self.name = name
        self.subjects = subjects
        self.duplicateWindow = duplicateWindow
        self.replicas = replicas
        self.storage = storage
        self.retention = retention
        self.maxAge = maxAge
    }

    /// The duplicate window of a stream the bridge creates when ``duplicateWindow`` is nil.
    public static let defaultDuplicateWindow: Duration = .seconds(120)

    /// Throws ``NATSError/Kind/invalidOption`` naming the rule when ``name`` cannot be used, or a
    /// stated ``replicas`` is not 1 to 5; ``NATSError/Kind/invalidSubject`` when a subject is not
    /// a subject or pattern.
    func checkSettings() throws(NATSError) {
        if let problem = NATSNames.assetNameProblem(name) {
            throw NATSError(
                .invalidOption, "stream name \(NATSBridge.abbreviated(name)) cannot be used: \(problem)")
        }
        if let replicas, !(1...5).contains(replicas) {
            throw NATSError(.invalidOption, "stream \(name): replicas must be 1 to 5, not \(replicas)")
        }
        for subject in subjects where !NATSSubject.isValidPattern(subject) {
            throw NATSError(
                .invalidSubject, "stream \(name): \(NATSBridge.abbreviated(subject)) is not a subject or pattern")
        }
    }

    /// Where a stream's messages are kept.
    public enum Storage: Sendable, Equatable {
        /// On disk: survives a server restart.
        case file
        /// In memory: lost when every server holding a replica stops.
        case memory
    }

    /// When a stream's messages are removed.
    public enum Retention: Sendable, Equatable {
        /// When a limit (``NATSStream/maxAge``) removes them; every consumer can read everything.
        case limits
        /// Once every consumer that exists has acknowledged them.
        case interest
        /// Once one consumer has acknowledged them (each message is consumed once).
        case workQueue
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
///
/// Every publish is counted in ``pending`` from the moment it is accepted until the
/// server acknowledged it or it was given up (and reported, exactly, as
/// ``NATSStatus/refused(subject:count:reason:)`` when it will never be stored, or
/// ``NATSStatus/unconfirmed(subject:count:reason:)`` when the bridge closed before its
/// acknowledgment arrived). cnats calls ``acknowledged``
/// on its acknowledgment thread: success frees the message, a failure queues it for the
/// retry thread; nothing there waits. The retry thread republishes the queue at full
/// rate, backing off (25 ms doubling to 1 s) only while the server answers that no
/// stream leader responds, and waits while the connection is down.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class JetStreamContext: @unchecked Sendable {
    // @unchecked: `pointer` is written once, by init, before `self` is shared; cnats' jsCtx
    // functions are thread-safe. `retryState` is only touched under `retryCondition`'s lock.
    // The other stored properties are immutable, atomic or locked.
    private(set) var pointer: OpaquePointer!
    let connection: NATSConnection
    let status: Event<NATSStatus>
    /// How long an asynchronous publish waits for its acknowledgment before it is republished.
    let acknowledgmentWait: Int64
    /// At most this many publishes may be pending; a publish beyond it fails (reported).
    let maxPending: Int

    /// Publishes accepted and neither acknowledged nor given up.
    let pending = HeapAtomicWord<Int>(0)
    /// Events of publishes given up unacknowledged when the bridge closed (`.unconfirmed` statuses).
    let unconfirmed = HeapAtomicWord<Int>(0)
    /// Events of publishes that will never be stored (`.refused` statuses).
    let refused = HeapAtomicWord<Int>(0)
    /// Set before the first asynchronous publish: cnats 3.4's `js_PublishAsyncGetPendingList`
    /// crashes on a context that never published (its pending table does not exist yet).
    private let hasPublished = HeapAtomicWord<Bool>(false)
    /// Threads inside ``waitForAcknowledgments(until:)``: `settle` wakes them only when there are some.
    private let flushWaiters = HeapAtomicWord<Int>(0)
    private let settledCondition = NSCondition()
    /// Set by each acknowledgment; the retry thread clears it to decide whether to back off.
    private let acknowledgedSinceRetry = HeapAtomicWord<Bool>(false)

    private let retryCondition = NSCondition()
    private var retryState = RetryState()
    private let retryThreadDone = DispatchSemaphore(value: 0)
    /// The retry thread's pthread, stored by the thread itself when it starts.
    private let retryThread = Locked<pthread_t?>(nil)
    /// The stream each exported subject publishes into and each export's publishers, for
    /// finding a given-up message's stream and its export.
    private let registry = Locked(Registry())

    struct RetryState {
        var queue: [Retry] = []
        var isStopped = false
        /// Given up after the bridge started closing (late acknowledgment failures).
        var droppedWhileClosing = 0
    }

    struct Retry {
        /// A `natsMsg` this context owns.
        var message: OpaquePointer
        var failure: Failure
    }

    enum Failure: Equatable {
        /// No acknowledgment in time, or the connection was down: republish now.
        case timeout
        /// No stream answered the subject (a leader election, or the stream is gone): republish after a backoff.
        case noResponders
        /// The server refused the message for good (a limit, a size): give it up.
        case refused(String)
    }

    struct Registry {
        var streamBySubject: [String: String] = [:]
        var publishers: [UInt64: PublisherReference] = [:]
        /// Subjects the server refused this connection's publishes to (a permission), with the
        /// server's words and when it last said them.
        var deniedSubjects: [String: (reason: String, at: Date)] = [:]
    }

    /// How long a permission denial of a subject gives up that subject's messages: a message
    /// republished to a subject still denied is denied again (and the denial renewed), so
    /// messages stop being given up this long after the server's permissions allow the subject.
    static let denialMemory: TimeInterval = 5

    struct PublisherReference {
        weak var publisher: ExportedPublisher?
    }

    init(
        connection: NATSConnection, status: Event<NATSStatus>, acknowledgmentWait: Duration = .seconds(1),
        maxPending: Int
    ) throws(NATSError) {
        self.connection = connection
        self.status = status
        self.acknowledgmentWait = acknowledgmentWait.wholeMilliseconds
        self.maxPending = max(1, maxPending)
        var options = jsOptions()
        try NATSError.check(jsOptions_Init(&options), "initializing JetStream options")
        options.Wait = 5000
        // cnats' own bound never binds before ours (`pending` also counts the retry queue).
        options.PublishAsync.MaxPending = Int64(self.maxPending) + 1
        options.PublishAsync.StallWait = 1
        options.PublishAsync.AckHandler = JetStreamContext.acknowledged
        var context: OpaquePointer?
        options.PublishAsync.AckHandlerClosure = Unmanaged.passUnretained(self).toOpaque()
        try NATSError.check(
            natsConnection_JetStream(&context, connection.pointer, &options), "creating a JetStream context")
        pointer = context!
        // cnats' reference for the acknowledgment callback, released by `destroy()`.
        _ = Unmanaged.passRetained(self)
        let thread = Thread { [self] in
            retryThread.withLock { $0 = pthread_self() }
            runRetries()
            retryThreadDone.signal()
        }
        thread.name = "ObserverNATS.republish"
        thread.start()
    }

    /// Set by `close()`: publishes after it fail with `NATS_CONNECTION_CLOSED`.
    let isClosed = HeapAtomicWord<Bool>(false)
    /// Publishes inside `js_PublishMsgAsync` now: `destroy()` waits for none before destroying.
    let publishing = HeapAtomicWord<Int>(0)
    let isDestroyed = HeapAtomicWord<Bool>(false)

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
            natsMsg_Destroy(message)
            context.acknowledgedSinceRetry.store(true, ordering: .relaxed)
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

    /// Takes `message` into the retry queue (or gives it up when the context is closing).
    private func enqueue(_ message: OpaquePointer, _ failure: Failure) {
        retryCondition.lock()
        if retryState.isStopped {
            retryState.droppedWhileClosing += Self.eventCount(of: message)
            retryCondition.unlock()
            drop([message], reason: Self.closingReason, refused: false)
            return
        }
        retryState.queue.append(Retry(message: message, failure: failure))
        retryCondition.signal()
        retryCondition.unlock()
    }

    static let closingReason = "not acknowledged by the server when the bridge closed"

    /// Counts `count` publishes as settled (acknowledged or given up) and wakes flushers at 0.
    private func settle(_ count: Int, acknowledged: Bool) {
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

    // MARK: Retrying

    private func runRetries() {
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

    /// Whether an export publishes `subject` through this context.
    func publishes(to subject: String) -> Bool {
        registry.withLock { $0.streamBySubject[subject] != nil }
    }

    /// Records that the server refused a publish to `subject` for `reason` (a permission).
    func noteDenied(_ subject: String, reason: String) {
        registry.withLock { $0.deniedSubjects[subject] = (reason, Date()) }
        retryCondition.lock()
        retryCondition.signal()
        retryCondition.unlock()
    }

    /// Gives up the messages of `batch` to subjects the server denied lately; returns the others.
    private func dropMessagesToDeniedSubjects(_ batch: [Retry]) -> [Retry] {
        let now = Date()
        let denied = registry.withLock { registry -> [String: String] in
            registry.deniedSubjects = registry.deniedSubjects.filter {
                now.timeIntervalSince($0.value.at) < Self.denialMemory
            }
            return registry.deniedSubjects.mapValues(\.reason)
        }
        guard !denied.isEmpty else { return batch }
        var kept: [Retry] = []
        for retry in batch {
            let subject = natsMsg_GetSubject(retry.message).map { String(cString: $0) } ?? ""
            if let reason = denied[subject] {
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
    private func drop(_ messages: [OpaquePointer], reason: String, refused isRefused: Bool) -> Int {
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

    // MARK: Closing

    /// Stops republishing and gives up every publish still pending (reported); returns how many
    /// events they carried.
    func giveUpPending() -> Int {
        retryCondition.lock()
        retryState.isStopped = true
        let queued = retryState.queue.map(\.message)
        retryState.queue = []
        retryCondition.broadcast()
        retryCondition.unlock()
        // From the retry thread itself (an observer of a status it sent closed the bridge) there
        // is nothing to wait for: it checks `isClosed` before each republish once this returns.
        if !isRetryThread {
            retryThreadDone.wait()
            retryThreadDone.signal()
        }
        var list = natsMsgList()
        var inFlight: [OpaquePointer] = []
        // Sequentially consistent with the store in `publish`, which precedes its `pending`
        // increment: a publish this counted as pending has its flag seen here.
        if hasPublished.load(ordering: .sequentiallyConsistent),
            js_PublishAsyncGetPendingList(&list, pointer) == NATS_OK
        {
            for index in 0..<Int(list.Count) {
                if let message = list.Msgs[index] {
                    inFlight.append(message)
                    list.Msgs[index] = nil
                }
            }
            natsMsgList_Destroy(&list)
        }
        return drop(queued + inFlight, reason: Self.closingReason, refused: false)
    }

    /// Whether the calling thread is this context's retry thread.
    var isRetryThread: Bool {
        retryThread.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Publishes given up by acknowledgment failures that arrived after ``giveUpPending()``.
    var droppedWhileClosing: Int {
        retryCondition.lock()
        defer { retryCondition.unlock() }
        return retryState.droppedWhileClosing
    }

    /// Destroys the context (the bridge has closed the connection), so that cnats'
    /// acknowledgment subscription and its thread go with the connection.
    func destroy() {
        // Sequentially consistent with `publish`: either it sees the flag, or this sees its count.
        isClosed.store(true, ordering: .sequentiallyConsistent)
        while publishing.load(ordering: .sequentiallyConsistent) > 0 { sched_yield() }
        retryCondition.lock()
        let retrying = !retryState.isStopped
        retryCondition.unlock()
        if retrying { _ = giveUpPending() }
        if !isDestroyed.exchange(true, ordering: .acquiringAndReleasing) {
            jsCtx_Destroy(pointer)
            // cnats makes no acknowledgment callback for a destroyed context: drop its reference.
            let address = UInt(bitPattern: Int(bitPattern: Unmanaged.passUnretained(self).toOpaque()))
            NATSConnection.teardown.async {
                Unmanaged<JetStreamContext>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).release()
            }
        }
    }

    // MARK: Streams and consumers

    /// Records which stream `subject` publishes into and which publisher publishes it.
    func register(_ publisher: ExportedPublisher, stream: String) {
        registry.withLock { registry in
            registry.streamBySubject[publisher.subject] = stream
            registry.publishers[publisher.publisher] = PublisherReference(publisher: publisher)
        }
    }

    /// Creates `stream` unless a stream of that name exists; an existing one must have every
    /// setting `stream` states. Returns the stream's retention (the server's when it exists).
    @discardableResult
    func ensure(_ stream: NATSStream) throws(NATSError) -> NATSStream.Retention {
        try stream.checkSettings()
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let found = stream.name.withCString { js_GetStreamInfo(&info, pointer, $0, nil, &code) }
        if found == NATS_OK, let info {
            defer { jsStreamInfo_Destroy(info) }
            let existing = info.pointee.Config.pointee
            let differences = Self.differences(stream, existing)
            guard differences.isEmpty else {
                throw NATSError(
                    .jetStream,
                    "stream \(stream.name) exists with another configuration: \(differences.joined(separator: "; "))")
            }
            return Self.retention(existing.Retention)
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
        let retention = stream.retention ?? .limits
        config.Name = UnsafePointer(name)
        config.Storage = stream.storage == .memory ? js_MemoryStorage : js_FileStorage
        config.Retention = Self.retentionPolicy(retention)
        config.Replicas = Int64(stream.replicas ?? 1)
        config.MaxAge = stream.maxAge.map { $0.wholeMilliseconds * 1_000_000 } ?? 0
        config.Duplicates =
            Int64((stream.duplicateWindow ?? NATSStream.defaultDuplicateWindow).wholeMilliseconds) * 1_000_000
        let added = subjects.withUnsafeBufferPointer { buffer -> natsStatus in
            config.Subjects = UnsafeMutablePointer(mutating: buffer.baseAddress)
            config.SubjectsLen = Int32(buffer.count)
            return js_AddStream(&info, pointer, &config, nil, &code)
        }
        if added == NATS_OK {
            jsStreamInfo_Destroy(info)
            return retention
        }
        throw NATSError.from(added, "creating stream \(stream.name) (JetStream error \(code.rawValue))")!.asJetStream
    }

    static func retentionPolicy(_ retention: NATSStream.Retention) -> jsRetentionPolicy {
        switch retention {
        case .limits: js_LimitsPolicy
        case .interest: js_InterestPolicy
        case .workQueue: js_WorkQueuePolicy
        }
    }

    static func retention(_ policy: jsRetentionPolicy) -> NATSStream.Retention {
        switch policy {
        case js_InterestPolicy: .interest
        case js_WorkQueuePolicy: .workQueue
        default: .limits
        }
    }

    /// How the existing stream's configuration differs from what `wanted` states, one phrase each
    /// (a setting `wanted` leaves nil is not compared).
    static func differences(_ wanted: NATSStream, _ existing: jsStreamConfig) -> [String] {
        var differences: [String] = []
        let subjects = (0..<Int(existing.SubjectsLen)).compactMap { index in
            existing.Subjects[index].map { String(cString: $0) }
        }
        if Set(subjects) != Set(wanted.subjects) {
            differences.append("subjects \(subjects.sorted()) (wanted \(wanted.subjects.sorted()))")
        }
        // A stream created without replicas reports 0, which is 1.
        let replicas = max(1, existing.Replicas)
        if let wantedReplicas = wanted.replicas, replicas != Int64(wantedReplicas) {
            differences.append("replicas \(replicas) (wanted \(wantedReplicas))")
        }
        let storage: NATSStream.Storage = existing.Storage == js_MemoryStorage ? .memory : .file
        if let wantedStorage = wanted.storage, storage != wantedStorage {
            differences.append("storage \(storage) (wanted \(wantedStorage))")
        }
        let retention = retention(existing.Retention)
        if let wantedRetention = wanted.retention, retention != wantedRetention {
            differences.append("retention \(retention) (wanted \(wantedRetention))")
        }
        if let wantedAge = wanted.maxAge {
            let maxAge = max(0, wantedAge.wholeMilliseconds) * 1_000_000
            if existing.MaxAge != maxAge {
                differences.append(
                    "max age \(describe(nanoseconds: existing.MaxAge)) (wanted \(describe(nanoseconds: maxAge)))")
            }
        }
        if let wantedWindow = wanted.duplicateWindow {
            let duplicates = Int64(wantedWindow.wholeMilliseconds) * 1_000_000
            if existing.Duplicates != duplicates {
                differences.append(
                    "duplicate window \(describe(nanoseconds: existing.Duplicates)) "
                        + "(wanted \(describe(nanoseconds: duplicates)))")
            }
        }
        return differences
    }

    static func describe(nanoseconds: Int64) -> String {
        nanoseconds == 0 ? "unlimited" : "\(Double(nanoseconds) / 1e9) s"
    }

    /// The names of the streams that store `subject` (JetStream's stream lookup by subject).
    func streams(storing subject: String) throws(NATSError) -> [String] {
        let request: Data
        do {
            request = try JSONSerialization.data(withJSONObject: ["subject": subject])
        } catch {
            throw NATSError(.invalidSubject, "\"\(subject)\" cannot be sent in a stream lookup")
        }
        var reply: OpaquePointer?
        let result = request.withUnsafeBytes { bytes in
            natsConnection_Request(
                &reply, connection.pointer, "$JS.API.STREAM.NAMES", bytes.baseAddress, Int32(bytes.count), 5000)
        }
        if let error = NATSError.from(result, "looking up the stream that stores \(subject)") {
            throw error.asJetStream
        }
        defer { natsMsg_Destroy(reply) }
        let data = Data(
            bytes: natsMsg_GetData(reply), count: Int(natsMsg_GetDataLength(reply)))
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw NATSError(.jetStream, "the stream lookup for \(subject) answered something that is not JSON")
        }
        if let error = object["error"] as? [String: Any] {
            throw NATSError(
                .jetStream, "looking up the stream that stores \(subject): \(error["description"] ?? "unknown error")")
        }
        return object["streams"] as? [String] ?? []
    }

    /// Throws unless `stream` is the one stream that stores `subject`.
    func checkStored(_ subject: String, in stream: String) throws(NATSError) {
        let names = try streams(storing: subject)
        if names.isEmpty {
            throw NATSError(
                .jetStream, "no stream stores \(subject): stream \(stream) does not cover it, nothing would be stored")
        }
        guard names == [stream] else {
            throw NATSError(
                .jetStream,
                "\(subject) is stored by stream \(names.sorted().joined(separator: ", ")), not \(stream)")
        }
    }

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

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSError {
    var asJetStream: NATSError {
        kind == .client ? NATSError(.jetStream, message, status: status, detail: detail) : self
    }
}
