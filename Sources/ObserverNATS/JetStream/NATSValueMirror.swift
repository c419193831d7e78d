import CNATS
import Foundation
import ObserverEngine
import ObserverSwift

/// A running mirror of an `ObservableValue` through a JetStream key-value
/// bucket; see ``NATSBridge/mirror(_:bucket:key:codec:)``.
///
/// A subscription token as ``NATSExport`` is: ``store(in:)-(SubscriptionBag)`` puts it in a
/// `SubscriptionBag`, and ``subscription`` is a `Subscription` that cancels it.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public final class NATSMirror: NATSToken {
    let mirrored: MirroredValueState
    weak let bridge: NATSBridge?

    init(mirrored: MirroredValueState, bridge: NATSBridge) {
        self.mirrored = mirrored
        self.bridge = bridge
    }

    /// The bucket and key the value is mirrored through.
    public var bucket: String { mirrored.bucket }
    public var key: String { mirrored.key }
    /// Values taken from the bucket (written by other mirrors) so far.
    public var appliedCount: Int { mirrored.applied.load(ordering: .relaxed) }
    /// Local changes written to the bucket so far.
    public var publishedCount: Int { mirrored.published.load(ordering: .relaxed) }
    /// Entries of the bucket that were not frames of the value's type.
    public var malformedCount: Int { mirrored.malformed.load(ordering: .relaxed) }
    /// The bucket revision of the newest entry of the key this mirror has taken in (applied
    /// to the value, or passed over as its own write), 0 before the first. Once it reaches
    /// the revision of the bucket's last write, the value holds what that write left: a test,
    /// or code that waits for a mirror to catch up, compares it with another mirror's.
    public var revision: UInt64 { mirrored.revision.load(ordering: .acquiring) }

    /// Stops mirroring: local changes are no longer written, and no bucket
    /// change is applied after this returns (unless called from a handler of
    /// the value run by this mirror, or an observer of its statuses, which run on its watcher
    /// thread and cannot wait for it). Returns true when this call stopped the mirror; false
    /// when it was stopped already (cancelled, or its bridge closed) or is being stopped by
    /// another call, which this one then waits for: either way nothing is applied after it
    /// returns.
    @discardableResult
    public func cancel() -> Bool {
        let stoppedNow = mirrored.stop()
        bridge?.unregister(self)
        return stoppedNow
    }

    /// Whether the mirror still runs (neither cancelled nor stopped by its bridge's close):
    /// false once its stop has finished.
    public var isActive: Bool { !mirrored.stopProgress.hasFinished }

    /// A token that cancels this mirror: for a place that holds `Subscription`s.
    public var subscription: Subscription { Subscription(canceller: self) }

    /// Adds this mirror to `bag`, which cancels it when deallocated.
    public func store(in bag: SubscriptionBag) { subscription.store(in: bag) }

    /// Inserts a token of this mirror into `set`, cancelling the mirror when the token is
    /// released (see `Subscription.store(in:)`).
    public func store(in set: inout Set<Subscription>) { subscription.store(in: &set) }
}

/// The watcher thread and the echo bookkeeping of one mirror.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class MirroredValueState: @unchecked Sendable {
    // @unchecked: `watcher`, `store`, `advisories`, `connection` and `streamCreated` are set
    // before the watcher thread starts and destroyed after it has ended (or by it); the watcher
    // thread replaces `watcher` and `store` (and `streamCreated`) under `watcherLock`, which
    // `stop()` takes to reach the watcher; `isStalled` and `rewatchAt` are the watcher thread's;
    // `ownWrites` is guarded by its lock; the rest is immutable or atomic.
    let bucket: String
    let key: String
    let publisher: UInt64
    let sequence = HeapAtomicWord<UInt64>(0)
    let applied = HeapAtomicWord<Int>(0)
    let published = HeapAtomicWord<Int>(0)
    let malformed = HeapAtomicWord<Int>(0)
    /// The newest entry's revision, stored (release) after the entry was applied or passed
    /// over, so that a reader that sees it also sees the value it left.
    let revision = HeapAtomicWord<UInt64>(0)
    let stopping = HeapAtomicWord<Bool>(false)
    let stopProgress = TokenStop()
    let tearsDownItself = HeapAtomicWord<Bool>(false)
    let ended = DispatchSemaphore(value: 0)
    let status: Event<NATSStatus>
    var store: OpaquePointer?
    var watcher: OpaquePointer?
    var observer: Subscription?
    let watcherLock = NSLock()
    var connection: NATSConnection?
    /// The JetStream advisories of the bucket's stream (created, deleted): a synchronous
    /// subscription the watcher thread reads between entries; nil when it could not be made.
    var advisories: OpaquePointer?
    /// When the stream of the bucket watched was created (nanoseconds since 1970; 0: unknown).
    var streamCreated: Int64 = 0
    /// Whether ``NATSStatus/mirrorStalled(bucket:key:reason:)`` was reported and not recovered.
    var isStalled = false
    /// When to watch the bucket afresh: a bucket of its name was created.
    var rewatchAt: Date?
    /// Until when a failed attempt to watch the bucket afresh is tried again.
    var rewatchUntil: Date?
    /// How long attempts to watch a bucket created again go on.
    static let rewatchPersistence: TimeInterval = 30

    /// The latest sequence number this mirror wrote, and whether an entry of
    /// another writer was applied since: then this mirror's own entry, when it
    /// comes back, must be applied too, so that every mirror ends on the
    /// bucket's last revision.
    ///
    /// Both are recorded by the mirror's observer of the value, never by the
    /// watcher before it sets: the value's sets are serialized and each runs
    /// its observers before the next set stores, so the record follows the
    /// order in which the value actually took each value.
    let ownWrites = Locked((latest: UInt64(0), otherAppliedSince: false))

    init(bucket: String, key: String, status: Event<NATSStatus>) {
        self.bucket = bucket
        self.key = key
        self.status = status
        self.publisher = FrameHeader.newPublisher()
    }

    var marker: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Whether an entry written by `header.publisher` should be set on the
    /// local value: every other writer's entry, and this mirror's latest write
    /// when another writer's value was set after it.
    func shouldApply(_ header: FrameHeader) -> Bool {
        if header.publisher != publisher { return true }
        return ownWrites.withLock { $0.latest == header.sequence && $0.otherAppliedSince }
    }

    /// Called by the mirror's observer for a value it set from the bucket.
    func recordApplied() {
        ownWrites.withLock { $0.otherAppliedSince = true }
    }

    func recordOwnWrite(_ number: UInt64) {
        ownWrites.withLock { $0 = (latest: number, otherAppliedSince: false) }
    }

    /// Stops the mirror; returns false when stopped already. Either way it returns once the
    /// watcher thread has ended, unless called on that thread.
    @discardableResult
    func stop() -> Bool {
        let onWatcherThread =
            RemoteDelivery.currentMirror == marker || RemoteDelivery.currentMirrorWatcher == marker
        func waitForStop() {
            guard !onWatcherThread else { return }
            stopProgress.waitUntilFinished()
            waitUntilEnded()
        }
        return stopProgress.stopOnce(waitForStop: waitForStop) {
            stopping.store(true, ordering: .releasing)
            observer?.cancel()
            watcherLock.withLock {
                if let watcher { kvWatcher_Stop(watcher) }
            }
            if onWatcherThread {
                // On the watcher thread, inside a handler: it tears down when it returns.
                tearsDownItself.store(true, ordering: .releasing)
            } else {
                waitUntilEnded()
                tearDown()
            }
        }
    }

    /// Waits until the watcher thread has ended.
    private func waitUntilEnded() {
        // Passed on, so that every caller returns.
        ended.wait()
        ended.signal()
    }

    func tearDown() {
        if let watcher { kvWatcher_Destroy(watcher) }
        if let store { kvStore_Destroy(store) }
        watcher = nil
        store = nil
        if let advisories {
            _ = natsSubscription_Unsubscribe(advisories)
            // cnats' reader thread may still reach a subscription it looked up before the
            // unsubscription: a flush it reads back proves it has finished with it (see
            // `ImportedSubject.cancel()`).
            if let connection, natsConnection_Status(connection.pointer) == NATS_CONN_STATUS_CONNECTED {
                _ = natsConnection_FlushTimeout(connection.pointer, 1000)
            }
            natsSubscription_Destroy(advisories)
        }
        advisories = nil
    }

    static let advisoryPrefix = "$JS.EVENT.ADVISORY.STREAM."

    /// Subscribes to the advisories of `bucket`'s stream; nil when cnats refuses.
    static func subscribeToAdvisories(_ bucket: String, _ connection: NATSConnection) -> OpaquePointer? {
        var subscription: OpaquePointer?
        let result = "\(advisoryPrefix)*.KV_\(bucket)".withCString {
            natsConnection_SubscribeSync(&subscription, connection.pointer, $0)
        }
        return result == NATS_OK ? subscription : nil
    }

    /// When the stream of `bucket` was created, or 0 when it does not exist (or no answer came).
    static func streamCreated(_ bucket: String, _ jetStream: JetStreamContext) -> Int64 {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        guard "KV_\(bucket)".withCString({ js_GetStreamInfo(&info, jetStream.pointer, $0, nil, &code) }) == NATS_OK,
            let info
        else { return 0 }
        defer { jsStreamInfo_Destroy(info) }
        return info.pointee.Created
    }

    /// The watcher thread, between entries: reads the bucket's advisories that arrived. A
    /// deleted bucket is reported stalled; a bucket created again (another stream than the one
    /// watched) is watched afresh, and reported recovered.
    func followBucket(_ jetStream: JetStreamContext) {
        guard let advisories else { return }
        var deleted = false
        while true {
            var message: OpaquePointer?
            guard natsSubscription_NextMsg(&message, advisories, 0) == NATS_OK, let message else { break }
            let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? ""
            natsMsg_Destroy(message)
            if subject.hasPrefix(Self.advisoryPrefix + "DELETED.") {
                deleted = true
                rewatchAt = nil
            }
            if subject.hasPrefix(Self.advisoryPrefix + "CREATED.") {
                rewatchAt = Date()
                rewatchUntil = Date().addingTimeInterval(Self.rewatchPersistence)
            }
        }
        if deleted && !isStalled { reportStalled("bucket \(bucket) was deleted") }
        guard let due = rewatchAt, Date() >= due, !stopping.load(ordering: .acquiring) else { return }
        let created = Self.streamCreated(bucket, jetStream)
        if created != 0 && created == streamCreated {
            // The advisory of the stream watched already (its creation by this mirror).
            rewatchAt = nil
            return
        }
        guard created != 0, watch(jetStream, streamCreated: created) else {
            // No answer (or the bucket went again, and its advisory is still to come): try again
            // every second for a while.
            let next = Date().addingTimeInterval(1)
            rewatchAt = next < (rewatchUntil ?? .distantPast) ? next : nil
            return
        }
        rewatchAt = nil
        if !isStalled { reportStalled("bucket \(bucket) was created again") }
        isStalled = false
        status.send(.mirrorRecovered(bucket: bucket, key: key))
    }

    private func reportStalled(_ reason: String) {
        isStalled = true
        status.send(.mirrorStalled(bucket: bucket, key: key, reason: reason))
    }

    /// Opens the bucket again and watches the key in it, in place of the watcher there was;
    /// false when that failed, or the mirror is stopping.
    private func watch(_ jetStream: JetStreamContext, streamCreated created: Int64) -> Bool {
        var newStore: OpaquePointer?
        guard js_KeyValue(&newStore, jetStream.pointer, bucket) == NATS_OK, let newStore else { return false }
        var options = kvWatchOptions()
        _ = kvWatchOptions_Init(&options)
        options.IgnoreDeletes = true
        var newWatcher: OpaquePointer?
        guard kvStore_Watch(&newWatcher, newStore, key, &options) == NATS_OK, let newWatcher else {
            kvStore_Destroy(newStore)
            return false
        }
        let replaced = watcherLock.withLock { () -> (watcher: OpaquePointer?, store: OpaquePointer?)? in
            if stopping.load(ordering: .acquiring) { return nil }
            defer {
                watcher = newWatcher
                store = newStore
                streamCreated = created
            }
            return (watcher, store)
        }
        guard let replaced else {
            kvWatcher_Destroy(newWatcher)
            kvStore_Destroy(newStore)
            return false
        }
        if let old = replaced.watcher { kvWatcher_Destroy(old) }
        if let old = replaced.store { kvStore_Destroy(old) }
        return true
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSBridge {
    /// Mirrors `value` through `key` of the JetStream key-value `bucket` (created,
    /// with file storage, when it does not exist).
    ///
    /// - A late joiner starts from the bucket's current value: when the key has a
    ///   value, it is set on `value` before this returns; when it has none, `value`'s
    ///   current value is written, acknowledged by the server before this returns.
    /// - Every later set of `value` is written to the bucket (asynchronously: the
    ///   setter does not wait for the server), and every value another mirror writes
    ///   is set on `value`, on the mirror's watcher thread.
    /// - No echo: a value set from the bucket is not written back, and a mirror does
    ///   not apply its own writes, unless another writer's value came in between (so
    ///   that all mirrors end on the bucket's latest revision).
    /// - Deleting or purging the key in the bucket is ignored.
    ///
    /// - Throws: ``NATSError/Kind/invalidSubject``, naming the rule, for a bucket or key NATS cannot
    ///   use (a bucket: ASCII letters, digits, `-` and `_`; a key: ASCII letters, digits and `-`,
    ///   `_`, `/`, `=`, with `.` between non-empty tokens), before anything is sent; a
    ///   JetStream error when the bucket cannot be created or watched.
    @discardableResult
    public func mirror<Value: NATSWireValue & Sendable>(
        _ value: ObservableValue<Value>, bucket: String, key: String
    ) throws(NATSError) -> NATSMirror {
        try mirror(value, bucket: bucket, key: key, codec: .binary)
    }

    /// ``mirror(_:bucket:key:)`` with an explicit codec.
    @discardableResult
    public func mirror<Value: Sendable>(
        _ value: ObservableValue<Value>, bucket: String, key: String, codec: NATSCodec<Value>
    ) throws(NATSError) -> NATSMirror {
        try checkOpen()
        if let problem = NATSNames.bucketProblem(bucket) {
            throw NATSError(.invalidSubject, "bucket name \(Self.abbreviated(bucket)) cannot be used: \(problem)")
        }
        if let problem = NATSNames.keyValueKeyProblem(key) {
            throw NATSError(.invalidSubject, "key-value key \(Self.abbreviated(key)) cannot be used: \(problem)")
        }
        // The longest subjects the mirror's names go into: its entries' and its stream's creation.
        for (subject, what) in [
            ("$KV.\(bucket).\(key)", "bucket and key"), ("$JS.API.STREAM.CREATE.KV_\(bucket)", "bucket"),
        ] {
            if let problem = NATSSubject.protocolLengthProblem(subject, what: "the subject of the \(what)") {
                throw NATSError(.invalidSubject, problem)
            }
        }
        let jetStream = try self.jetStream()
        let state = MirroredValueState(bucket: bucket, key: key, status: status)
        state.store = try Self.openBucket(bucket, jetStream: jetStream)
        var watchOptions = kvWatchOptions()
        _ = kvWatchOptions_Init(&watchOptions)
        watchOptions.IgnoreDeletes = true
        var watcher: OpaquePointer?
        if let error = NATSError.from(
            kvStore_Watch(&watcher, state.store, key, &watchOptions), "watching \(bucket).\(key)")
        {
            state.tearDown()
            throw error.asJetStream
        }
        state.watcher = watcher
        state.connection = connection
        // Subscribed first: a bucket created again after the stream lookup below is heard.
        state.advisories = MirroredValueState.subscribeToAdvisories(bucket, connection)
        state.streamCreated = MirroredValueState.streamCreated(bucket, jetStream)

        let subject = "$KV.\(bucket).\(key)"
        let apply: @Sendable (OpaquePointer) -> Void = { entry in
            let frame = UnsafeRawBufferPointer(
                start: kvEntry_Value(entry), count: Int(kvEntry_ValueLen(entry)))
            guard let header = FrameHeader(frame: frame, expectedTag: codec.tag),
                let decoded = try? codec.decode(UnsafeRawBufferPointer(rebasing: frame[FrameHeader.size...]))
            else {
                let count = state.malformed.wrappingAdd(1, ordering: .relaxed).newValue
                state.status.send(.malformed(subject: subject, count: count))
                return
            }
            guard state.shouldApply(header) else { return }
            state.applied.wrappingAdd(1, ordering: .relaxed)
            RemoteDelivery.applying(state.marker) { value.value = decoded }
        }

        // The initial values: the key's current entry, if any, then a NULL entry.
        var sawValue = false
        while true {
            var entry: OpaquePointer?
            let result = kvWatcher_Next(&entry, watcher, 5000)
            if let error = NATSError.from(result, "reading \(bucket).\(key)") {
                state.tearDown()
                throw error.asJetStream
            }
            guard let entry else { break }
            if kvEntry_Operation(entry) == kvOp_Put {
                apply(entry)
                sawValue = true
            }
            state.revision.store(kvEntry_Revision(entry), ordering: .releasing)
            kvEntry_Destroy(entry)
        }

        let publish: @Sendable (Value) -> Void = { newValue in
            let number = state.sequence.wrappingAdd(1, ordering: .relaxed).newValue
            state.recordOwnWrite(number)
            let header = FrameHeader(tag: codec.tag, publisher: state.publisher, sequence: number)
            let encoded = codec.withFrame(newValue, FrameHeader.size) { frame in
                header.write(to: frame)
                let error = subject.withCString {
                    jetStream.publish(
                        subject: $0, frame: UnsafeRawBufferPointer(frame), publisher: state.publisher, sequence: number)
                }
                if let error {
                    state.status.send(.publishFailed(subject: subject, error: error))
                } else {
                    state.published.wrappingAdd(1, ordering: .relaxed)
                }
            }
            if !encoded {
                state.status.send(.publishFailed(subject: subject, error: "the codec could not encode the value"))
            }
        }
        if !sawValue {
            // The key is empty: write the local value and wait for the server, so that a mirror
            // made after this returns starts from it.
            let number = state.sequence.wrappingAdd(1, ordering: .relaxed).newValue
            state.recordOwnWrite(number)
            let header = FrameHeader(tag: codec.tag, publisher: state.publisher, sequence: number)
            var result = NATS_OK
            let encoded = codec.withFrame(value.value, FrameHeader.size) { frame in
                header.write(to: frame)
                var revision: UInt64 = 0
                result = kvStore_Put(&revision, state.store, key, frame.baseAddress, Int32(frame.count))
            }
            if let error = NATSError.from(result, "writing \(bucket).\(key)") {
                state.tearDown()
                throw error.asJetStream
            }
            if encoded {
                state.published.wrappingAdd(1, ordering: .relaxed)
            } else {
                state.status.send(.publishFailed(subject: subject, error: "the codec could not encode the value"))
            }
        }
        state.observer = value.subscribe { newValue in
            if RemoteDelivery.currentMirror == state.marker {
                state.recordApplied()
                return
            }
            if state.stopping.load(ordering: .relaxed) { return }
            publish(newValue)
        }

        let thread = Thread {
            pthread_setspecific(RemoteDelivery.mirrorWatcherKey, state.marker)
            while !state.stopping.load(ordering: .acquiring) {
                state.followBucket(jetStream)
                if state.stopping.load(ordering: .acquiring) { break }
                var entry: OpaquePointer?
                let result = kvWatcher_Next(&entry, state.watcher, 200)
                if result == NATS_TIMEOUT { continue }
                guard result == NATS_OK else { break }
                guard let entry else { continue }
                if kvEntry_Operation(entry) == kvOp_Put && !state.stopping.load(ordering: .acquiring) {
                    apply(entry)
                }
                state.revision.store(kvEntry_Revision(entry), ordering: .releasing)
                kvEntry_Destroy(entry)
            }
            // Cancelled from a handler on this thread: nobody waits, so tear down here.
            if state.tearsDownItself.load(ordering: .acquiring) { state.tearDown() }
            state.ended.signal()
        }
        thread.name = "ObserverNATS mirror \(bucket).\(key)"
        thread.start()
        let handle = NATSMirror(mirrored: state, bridge: self)
        try register(handle)
        return handle
    }

    static func openBucket(_ bucket: String, jetStream: JetStreamContext) throws(NATSError) -> OpaquePointer {
        var store: OpaquePointer?
        let found = js_KeyValue(&store, jetStream.pointer, bucket)
        if found == NATS_OK, let store { return store }
        var config = kvConfig()
        _ = kvConfig_Init(&config)
        let name = strdup(bucket)
        defer { free(name) }
        config.Bucket = UnsafePointer(name)
        config.History = 1
        config.StorageType = js_FileStorage
        let created = js_CreateKeyValue(&store, jetStream.pointer, &config)
        if created == NATS_OK, let store { return store }
        throw NATSError.from(created, "creating key-value bucket \(bucket)")!.asJetStream
    }
}
