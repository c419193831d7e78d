import CNATS
import Foundation
import ObserverSwift

/// One `jsCtx` with asynchronous publishing that republishes until acknowledged.
///
/// Every publish is counted in ``pending`` from the moment it is accepted until the
/// server acknowledged it or it was given up (and reported, exactly, as
/// ``NATSStatus/refused(subject:count:reason:)`` when it will never be stored, or
/// ``NATSStatus/unconfirmed(subject:count:reason:)`` when the bridge closed before its
/// acknowledgment arrived). cnats calls ``acknowledged``
/// on its acknowledgment thread: success frees the message, a failure queues it for the
/// retry thread; nothing there waits. The retry thread republishes the queue at full
/// rate and waits while the connection is down. A subject the server answers that no
/// stream responds to is silent: its messages are republished on a backoff of its own
/// (25 ms doubling to 1 s) until one of them is stored, and given up once a stream lookup
/// finds that no stream stores it any more; other subjects are not held back by it.
///
/// This file holds the context's state, its creation and its closing. Publishing and the
/// acknowledgments are in `JetStreamContext+Publishing.swift`; the retry thread and what it
/// gives up in `JetStreamContext+Republishing.swift`; stream lookup and creation in
/// `JetStreamContext+Streams.swift`; durable consumers in `JetStreamContext+Consumers.swift`.
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
    let hasPublished = HeapAtomicWord<Bool>(false)
    /// Threads inside ``waitForAcknowledgments(until:)``: `settle` wakes them only when there are some.
    let flushWaiters = HeapAtomicWord<Int>(0)
    let settledCondition = NSCondition()
    /// How many subjects are silent (``RetryState/silent``): an acknowledgment looks its
    /// subject up there only when some are.
    let silentSubjects = HeapAtomicWord<Int>(0)
    /// Reports of given-up messages not sent yet (see ``giveUp(_:)``).
    let unsentReports = Locked(UnsentReportTable())

    let retryCondition = NSCondition()
    var retryState = RetryState()
    private let retryThreadDone = DispatchSemaphore(value: 0)
    /// The retry thread's pthread, stored by the thread itself when it starts.
    private let retryThread = Locked<pthread_t?>(nil)
    /// The stream each exported subject publishes into and each export's publishers, for
    /// finding a given-up message's stream and its export.
    let registry = Locked(Registry())

    struct RetryState {
        /// Messages to republish at the next round.
        var queue: [Retry] = []
        /// Subjects no stream responded to lately, by subject.
        var silent: [String: SilentSubject] = [:]
        /// The next round waits until then (the connection is down, or could not take a message).
        var pauseUntil: Date?
        var isStopped = false
        /// Given up after the bridge started closing (late acknowledgment failures).
        var droppedWhileClosing = 0
    }

    /// A subject the server answered that no stream responds to, and its messages held until
    /// `retryAt`. Forgotten when one of its messages is stored, or when none of those
    /// republished last came back silent within their acknowledgment wait.
    struct SilentSubject {
        var messages: [Retry] = []
        /// When "no responders" was first answered for it.
        var since: Date
        var backoff: TimeInterval
        var retryAt: Date
        /// The last stream lookup for it.
        var lastStreamCheck: Date?
        /// When its messages were last republished.
        var lastRepublished: Date?
    }

    struct UnsentReports {
        var statuses: ArraySlice<NATSStatus>
        /// Messages settled once the last of `statuses` was sent.
        var unsettled: Int
    }

    struct UnsentReportTable {
        var nextIdentity = 0
        var batches: [Int: UnsentReports] = [:]
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
        var deniedSubjects: [SubjectBytes: (reason: String, at: Date)] = [:]
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

    // MARK: Closing

    /// Stops republishing and gives up every publish still pending (reported); returns how many
    /// events they carried.
    func giveUpPending() -> Int {
        retryCondition.lock()
        retryState.isStopped = true
        let queued = retryState.queue.map(\.message) + retryState.silent.values.flatMap { $0.messages.map(\.message) }
        retryState.queue = []
        retryState.silent = [:]
        silentSubjects.store(0, ordering: .relaxed)
        retryCondition.broadcast()
        retryCondition.unlock()
        // From the retry thread itself (an observer of a status it sent closed the bridge) there
        // is nothing to wait for: it holds nothing but the reports it was sending.
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
}
