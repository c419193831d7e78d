import CNATS
import Foundation
import ObserverSwift

/// One connection to NATS that carries ObserverSwift events between processes.
///
/// ```swift
/// let bridge = try NATSBridge(options: NATSOptions(servers: ["nats://127.0.0.1:4222"]))
/// let temperature = Event<Double>()
/// try bridge.export(temperature, to: "sensors.temperature")     // local sends are published
/// let remote = Event<Double>()
/// try bridge.import("sensors.temperature", into: remote)       // remote sends arrive here
/// let printing = remote.subscribe { value in print("remote:", value) }
/// bridge.close()
/// ```
///
/// Threading: every method may be called from any thread. Received values
/// are sent into the local event on the client's delivery thread for that
/// import (one thread per import, so each import delivers in order), which
/// is the "sending thread" of ObserverSwift's rules; observers given a queue
/// or the main actor run there instead. ``status`` is sent on the client's
/// callback thread, or on the delivery thread for gaps and malformed messages.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public final class NATSBridge: Sendable {
    /// Connection events, slow consumers, gaps and malformed messages (see ``NATSStatus``).
    public let status: Event<NATSStatus>

    /// The options the bridge connected with.
    public let options: NATSOptions

    let connection: NATSConnection
    let callbacks: ConnectionCallbacks
    let state = Locked(BridgeState())
    /// Signalled when the first close has finished (its result is in `state`).
    let closeCondition = NSCondition()

    struct BridgeState {
        /// Set by the first ``NATSBridge/close(timeout:)``.
        var isClosed = false
        /// What the first close returned, once it has finished.
        var closeResult: Int?
        /// The thread running the first close, until it has finished: a status observer it
        /// calls (the statuses of what it gives up) may call `close()` again on that thread.
        var closingThread: pthread_t?
        var exports: [ObjectIdentifier: NATSExport] = [:]
        var imports: [ObjectIdentifier: NATSImport] = [:]
        var mirrors: [ObjectIdentifier: NATSMirror] = [:]
        var jetStream: JetStreamContext?
        /// With batching: the linger thread, started by the first export.
        var linger: BatchLinger?
        /// Cancelled imports' subscriptions (addresses), destroyed by `close()` once the
        /// connection is closed: cnats crashed (a freed mutex locked) when a subscription
        /// was destroyed right after its on-complete callback while the connection was open.
        var retiredSubscriptions: [UInt] = []
        /// Set when `close()` has destroyed the retired subscriptions.
        var isTornDown = false
    }

    /// Connects, or throws within `options.connectTimeout`: ``NATSError/Kind/unreachable``
    /// when no server answers, ``NATSError/Kind/authorizationFailed`` when the server refuses
    /// the credentials.
    ///
    /// - Parameters:
    ///   - options: the servers, credentials, TLS, latency mode, limits and timeouts.
    ///   - status: the event to report on; pass your own to observe the first
    ///     ``NATSStatus/connected(url:)``, which is sent before the initializer returns.
    public init(options: NATSOptions = NATSOptions(), status: Event<NATSStatus> = Event()) throws(NATSError) {
        self.status = status
        self.options = options
        let callbacks = ConnectionCallbacks(status: status)
        self.callbacks = callbacks
        var optionsPointer: OpaquePointer?
        try NATSError.check(natsOptions_Create(&optionsPointer), "creating connection options")
        defer { natsOptions_Destroy(optionsPointer) }
        let natsOptions = optionsPointer!
        try Self.apply(options, to: natsOptions)
        let closure = Unmanaged.passRetained(callbacks).toOpaque()
        var connectionPointer: OpaquePointer?
        do {
            try callbacks.install(on: natsOptions, closure: closure)
            try NATSError.check(
                natsConnection_Connect(&connectionPointer, natsOptions),
                "connecting to \(options.servers.joined(separator: ", "))")
        } catch {
            // Without a connection cnats makes no callback: take the reference back.
            Unmanaged<ConnectionCallbacks>.fromOpaque(closure).release()
            throw error
        }
        connection = NATSConnection(pointer: connectionPointer!)
        status.send(.connected(url: ConnectionCallbacks.connectedURL(connectionPointer)))
    }

    deinit {
        close(timeout: .seconds(2))
    }

    static func apply(_ options: NATSOptions, to natsOptions: OpaquePointer) throws(NATSError) {
        guard !options.servers.isEmpty else { throw NATSError(.invalidOption, "NATSOptions.servers is empty") }
        for server in options.servers {
            if let problem = NATSOptions.urlProblem(server) {
                throw NATSError(.invalidOption, "not a valid NATS URL: \"\(server)\": \(problem)")
            }
        }
        if case .events(let maxEvents, let linger) = options.batching {
            guard NATSOptions.Batching.eventLimits.contains(maxEvents) else {
                throw NATSError(
                    .invalidOption,
                    "NATSOptions.batching: max must be \(NATSOptions.Batching.eventLimits), not \(maxEvents)")
            }
            guard linger > .zero, linger <= NATSOptions.Batching.longestLinger else {
                throw NATSError(
                    .invalidOption,
                    "NATSOptions.batching: linger must be above 0 and at most \(NATSOptions.Batching.longestLinger), "
                        + "not \(linger)")
            }
        }
        let servers = options.servers.map { UnsafePointer(strdup($0)) }
        defer { servers.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        var serverList: [UnsafePointer<CChar>?] = servers
        try NATSError.check(
            natsOptions_SetServers(natsOptions, &serverList, Int32(servers.count)), "setting the server URLs")
        try NATSError.check(natsOptions_SetNoRandomize(natsOptions, true), "keeping the server order")
        if let name = options.name {
            try NATSError.check(natsOptions_SetName(natsOptions, name), "setting the connection name")
        }
        switch options.credentials {
        case .none: break
        case .userPassword(let user, let password):
            try NATSError.check(natsOptions_SetUserInfo(natsOptions, user, password), "setting user and password")
        case .token(let token):
            try NATSError.check(natsOptions_SetToken(natsOptions, token), "setting the token")
        }
        if let tls = options.tls { try apply(tls, to: natsOptions) }
        try NATSError.check(
            natsOptions_SetSendAsap(natsOptions, options.latency == .immediate), "setting the latency mode")
        try NATSError.check(natsOptions_SetNoEcho(natsOptions, !options.echo), "setting echo")
        try NATSError.check(
            natsOptions_SetTimeout(natsOptions, max(1, options.connectTimeout.wholeMilliseconds)),
            "setting the connect timeout")
        try NATSError.check(
            natsOptions_SetReconnectWait(natsOptions, max(1, options.reconnectWait.wholeMilliseconds)),
            "setting the reconnect wait")
        try NATSError.check(
            natsOptions_SetMaxReconnect(natsOptions, Int32(clamping: options.maxReconnectAttempts ?? Int(Int32.max))),
            "setting the reconnect attempts")
        try NATSError.check(
            natsOptions_SetReconnectBufSize(natsOptions, Int32(clamping: options.reconnectBufferBytes)),
            "setting the reconnect buffer")
        try NATSError.check(
            natsOptions_SetMaxPendingMsgs(natsOptions, Int32(clamping: options.pendingLimits.messages)),
            "setting the pending limit")
    }

    static func apply(_ tls: NATSOptions.TLS, to natsOptions: OpaquePointer) throws(NATSError) {
        func check(_ result: natsStatus, _ what: String) throws(NATSError) {
            if let error = NATSError.from(result, what) {
                throw NATSError(.invalidOption, error.message, status: error.status, detail: error.detail)
            }
        }
        try check(natsOptions_SetSecure(natsOptions, true), "turning TLS on")
        if let file = tls.trustedCertificatesFile {
            try NATSError.checkReadable(file, "the trusted certificates file")
            try check(natsOptions_LoadCATrustedCertificates(natsOptions, file), "loading \(file)")
        }
        if tls.clientCertificateFile != nil || tls.clientKeyFile != nil {
            guard let certificate = tls.clientCertificateFile, let key = tls.clientKeyFile else {
                throw NATSError(.invalidOption, "TLS: a client certificate needs both a certificate and a key file")
            }
            try NATSError.checkReadable(certificate, "the client certificate file")
            try NATSError.checkReadable(key, "the client key file")
            try check(natsOptions_LoadCertificatesChain(natsOptions, certificate, key), "loading \(certificate)")
        }
        if let host = tls.expectedHostname {
            try check(natsOptions_SetExpectedHostname(natsOptions, host), "setting the expected host name")
        }
        if tls.skipsServerVerification {
            try check(natsOptions_SkipServerVerification(natsOptions, true), "skipping server verification")
        }
        if let ciphers = tls.ciphers {
            try check(natsOptions_SetCiphers(natsOptions, ciphers), "setting the ciphers")
        }
    }

    // MARK: Closing

    /// Whether ``close(timeout:)`` was called.
    public var isClosed: Bool { state.withLock { $0.isClosed } }

    /// How long ``close(timeout:)`` waits for acknowledgments by default: longer than a
    /// cluster takes to elect a new stream leader after `kill -9` of the old one (measured
    /// 5.5–11.7 s until everything was stored, see the AcrossProcesses article).
    public static let defaultCloseTimeout: Duration = .seconds(30)

    /// Stops every export, cancels every import (waiting until none of their
    /// client callbacks runs: no synchronous handler is called after this returns; queue and
    /// main-actor handlers may still run for values enqueued before), waits up to `timeout`
    /// for the server to acknowledge every at-least-once publish, and closes the connection.
    ///
    /// Returns how many events of at-least-once publishes it gave up unacknowledged (each event of
    /// a batch counts; 0 when everything
    /// published was stored; always 0 for at-most-once, which has no acknowledgments): each
    /// is also reported in a ``NATSStatus/unconfirmed(subject:count:reason:)`` and counted in
    /// its export's ``NATSExport/unconfirmedPublishes``. A given-up publish may still have
    /// been stored: its acknowledgment did not arrive in time.
    ///
    /// Idempotent, and safe from any number of threads at once: the first call closes; every
    /// other call, during that close or after it, waits until the bridge is closed and returns
    /// the same count. The exception is a call from inside one of the bridge's own handlers (an
    /// import's observer, a ``status`` observer), which a close under way may be waiting for:
    /// there a call made while another close runs returns 0 at once, without waiting (the
    /// close under way reports what it gives up, and returns it to its own caller). A first
    /// call from inside a handler closes, without waiting for the handler it is called from;
    /// the other imports are still waited for. A first call from an observer of a status the
    /// bridge's retry thread sends (``NATSStatus/refused(subject:count:reason:)``) does not
    /// wait for acknowledgments, which nothing would republish meanwhile: it gives up what is
    /// pending at once. Every event given up is reported before ``NATSStatus/closed``.
    @discardableResult
    public func close(timeout: Duration = NATSBridge.defaultCloseTimeout) -> Int {
        let isFirst = state.withLock { state -> Bool in
            if state.isClosed { return false }
            state.isClosed = true
            state.closingThread = pthread_self()
            return true
        }
        guard isFirst else { return waitForClose() }
        let count = closeOnce(timeout: timeout)
        closeCondition.lock()
        state.withLock {
            $0.closeResult = count
            $0.closingThread = nil
        }
        closeCondition.broadcast()
        closeCondition.unlock()
        return count
    }

    /// Another call closes: its count once it has, or 0 at once from inside a handler it may wait for.
    private func waitForClose() -> Int {
        closeCondition.lock()
        defer { closeCondition.unlock() }
        if let result = state.withLock({ $0.closeResult }) { return result }
        if isInsideOwnHandler { return 0 }
        while true {
            if let result = state.withLock({ $0.closeResult }) { return result }
            closeCondition.wait()
        }
    }

    /// Whether the calling thread runs one of this bridge's handlers, which a close may wait
    /// for: an import's delivery, a mirror's update or its watcher thread (its status reports),
    /// cnats' connection callback (status) thread,
    /// the JetStream retry thread (its status reports), or the close itself (its status reports).
    private var isInsideOwnHandler: Bool {
        if let closing = state.withLock({ $0.closingThread }), pthread_equal(closing, pthread_self()) != 0 {
            return true
        }
        if let current = RemoteDelivery.current,
            Unmanaged<ImportedSubject>.fromOpaque(current).takeUnretainedValue().connection === connection
        {
            return true
        }
        if RemoteDelivery.currentMirror != nil || RemoteDelivery.currentMirrorWatcher != nil { return true }
        if callbacks.isCallbackThread { return true }
        return state.withLock { $0.jetStream }?.isRetryThread ?? false
    }

    /// The close itself, made once, by the first call.
    private func closeOnce(timeout: Duration) -> Int {
        let deadline = Date().addingTimeInterval(Double(max(0, timeout.wholeMilliseconds)) / 1000)
        let (exports, imports, mirrors) = state.withLock { state -> ([NATSExport], [NATSImport], [NATSMirror]) in
            defer {
                state.exports = [:]
                state.imports = [:]
                state.mirrors = [:]
            }
            return (Array(state.exports.values), Array(state.imports.values), Array(state.mirrors.values))
        }
        if exports.isEmpty && imports.isEmpty && mirrors.isEmpty && natsConnection_IsClosed(connection.pointer) {
            return 0
        }
        exports.forEach { $0.stop() }
        state.withLock { $0.linger }?.stop()
        mirrors.forEach { $0.mirrored.stop() }
        imports.forEach { $0.stop() }
        let remaining = max(1, Int64(deadline.timeIntervalSinceNow * 1000))
        _ = natsConnection_FlushTimeout(connection.pointer, remaining)
        let jetStream = state.withLock { $0.jetStream }
        var givenUp = 0
        if let jetStream {
            // On the retry thread (a status observer it runs closed the bridge) nothing is
            // republished while this waits: give up what is pending at once.
            if !jetStream.isRetryThread { _ = jetStream.waitForAcknowledgments(until: deadline) }
            givenUp = jetStream.giveUpPending()
            // Reports of what was given up before, not sent yet: before `.closed`.
            jetStream.sendUnsentReports()
        }
        natsConnection_Close(connection.pointer)
        // Wait for cnats' last connection callback (or give up after 5 s, keeping
        // `callbacks` alive through its own reference). On cnats' callback thread (a status
        // observer closed the bridge) that callback runs only after this returns: no wait.
        if !callbacks.isCallbackThread, callbacks.closedSignal.wait(timeout: .now() + 5) == .success {
            callbacks.closedSignal.signal()
        }
        // No denial can arrive any more: the denials table lets go of what it held.
        exports.forEach { $0.unregisterPublishers() }
        if let jetStream { callbacks.denials.unregister(jetStream) }
        let retired = state.withLock { state in
            defer {
                state.retiredSubscriptions = []
                state.isTornDown = true
            }
            return state.retiredSubscriptions
        }
        for address in retired { natsSubscription_Destroy(OpaquePointer(bitPattern: Int(bitPattern: address))) }
        jetStream?.destroy()
        return givenUp + (jetStream?.droppedWhileClosing ?? 0)
    }

    // MARK: Flushing

    /// At-least-once messages not acknowledged by the server yet: in flight, or waiting to be
    /// republished (after a timeout, a failover, or while disconnected). A batch
    /// (``NATSOptions/batching``) is one message. 0 without at-least-once exports.
    public var pendingPublishes: Int {
        max(0, state.withLock { $0.jetStream }?.pending.load(ordering: .relaxed) ?? 0)
    }

    /// Events of at-least-once publishes given up unacknowledged when the bridge closed (see
    /// ``NATSStatus/unconfirmed(subject:count:reason:)``).
    public var unconfirmedPublishes: Int {
        state.withLock { $0.jetStream }?.unconfirmed.load(ordering: .relaxed) ?? 0
    }

    /// Events of at-least-once publishes that will never be stored (see
    /// ``NATSStatus/refused(subject:count:reason:)``).
    public var refusedPublishes: Int {
        state.withLock { $0.jetStream }?.refused.load(ordering: .relaxed) ?? 0
    }

    /// Sends what is buffered to the server (batches lingering first, see ``NATSOptions/batching``)
    /// and waits up to `timeout` until the server has acknowledged every at-least-once publish
    /// made before (republishing continues meanwhile).
    ///
    /// Returns ``pendingPublishes`` when it returns: 0 when everything was stored (and, for
    /// at-most-once, written to the server), more when `timeout` passed first.
    @discardableResult
    public func flush(timeout: Duration) -> Int {
        let deadline = Date().addingTimeInterval(Double(max(0, timeout.wholeMilliseconds)) / 1000)
        for export in state.withLock({ Array($0.exports.values) }) {
            for publisher in export.exportedPublishers { publisher.sendPendingBatch() }
        }
        _ = natsConnection_FlushTimeout(connection.pointer, max(1, timeout.wholeMilliseconds))
        guard let jetStream = state.withLock({ $0.jetStream }) else { return 0 }
        return jetStream.waitForAcknowledgments(until: deadline)
    }

    /// Keeps a cancelled import's subscription until `close()` destroys it.
    func retire(_ subscription: OpaquePointer) {
        let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(subscription)))
        callbacks.importSubjects.withLock { _ = $0.removeValue(forKey: address) }
        let tornDown = state.withLock { state -> Bool in
            if !state.isTornDown { state.retiredSubscriptions.append(address) }
            return state.isTornDown
        }
        if tornDown { natsSubscription_Destroy(subscription) }
    }

    /// For an import whose bridge is gone: destroys the subscription on a Dispatch thread
    /// once its on-complete callback has run.
    static func destroyWhenComplete(_ subscription: OpaquePointer, _ imported: ImportedSubject) {
        let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(subscription)))
        NATSConnection.teardown.async {
            imported.waitUntilComplete()
            natsSubscription_Destroy(OpaquePointer(bitPattern: Int(bitPattern: address)))
        }
    }

    // MARK: Registration

    func register(_ export: NATSExport) throws(NATSError) {
        try register(export, in: \.exports) {
            export.stop()
            export.unregisterPublishers()
        }
    }

    func register(_ mirror: NATSMirror) throws(NATSError) {
        try register(mirror, in: \.mirrors) { mirror.mirrored.stop() }
    }

    /// Adds `token` to the bridge's tokens of its kind (`tokens`), which its close stops; on a
    /// closed bridge, stops it with `stop` instead and throws ``NATSError/Kind/closed``.
    private func register<Token: NATSToken>(
        _ token: Token, in tokens: WritableKeyPath<BridgeState, [ObjectIdentifier: Token]>, stop: () -> Void
    ) throws(NATSError) {
        let closed = state.withLock { state -> Bool in
            if state.isClosed { return true }
            state[keyPath: tokens][ObjectIdentifier(token)] = token
            return false
        }
        if closed {
            stop()
            throw NATSError(.closed, "the bridge is closed")
        }
    }

    func unregister(_ mirror: NATSMirror) { unregister(mirror, from: \.mirrors) }
    func unregister(_ export: NATSExport) { unregister(export, from: \.exports) }
    func unregister(_ imported: NATSImport) { unregister(imported, from: \.imports) }

    private func unregister<Token: NATSToken>(
        _ token: Token, from tokens: WritableKeyPath<BridgeState, [ObjectIdentifier: Token]>
    ) {
        _ = state.withLock { $0[keyPath: tokens].removeValue(forKey: ObjectIdentifier(token)) }
    }

    func checkOpen() throws(NATSError) {
        if isClosed { throw NATSError(.closed, "the bridge is closed") }
    }

    /// The settings of batching exports (nil when ``NATSOptions/batching`` is off), starting the
    /// linger thread on first use. Batches stay below the server's maximum payload.
    func batchSettings() throws(NATSError) -> BatchSettings? {
        guard case .events(let maxEvents, let linger) = options.batching else { return nil }
        let serverMaximum = Int(natsConnection_GetMaxPayload(connection.pointer))
        let maxBytes = (serverMaximum > 0 ? serverMaximum : 1024 * 1024) - BatchSettings.payloadReserve
        guard maxBytes > BatchFrameHeader.size + BatchFrameHeader.lengthSize else {
            throw NATSError(
                .invalidOption, "the server's maximum payload (\(serverMaximum) bytes) leaves no room for batches")
        }
        let thread = state.withLock { state -> BatchLinger? in
            if state.isClosed { return nil }
            if let existing = state.linger { return existing }
            let created = BatchLinger(linger: linger)
            state.linger = created
            return created
        }
        guard let thread else { throw NATSError(.closed, "the bridge is closed") }
        return BatchSettings(maxEvents: maxEvents, maxBytes: maxBytes, linger: thread)
    }

    func jetStream() throws(NATSError) -> JetStreamContext {
        let existing = state.withLock { $0.jetStream }
        if let existing { return existing }
        let created = try JetStreamContext(
            connection: connection, status: status, maxPending: options.maxPendingPublishes)
        let context = state.withLock { state in
            if let jetStream = state.jetStream { return jetStream }
            state.jetStream = created
            return created
        }
        callbacks.denials.register(context)
        return context
    }

    /// How long an import waits for the server's answer to its subscription (its flush, then
    /// cnats' callback thread).
    static let subscriptionCheckSeconds: TimeInterval = 2

    /// Subscribes `imported` to `subject` (core NATS) or to its consumer's deliver subject
    /// (JetStream, through a ``PushConsumer``).
    func subscribe(_ imported: ImportedSubject, subject: String, delivery: NATSDelivery, handle: NATSImport)
        throws(NATSError)
    {
        try checkOpen()
        var subscribeSubject = subject
        var consumer: PushConsumer?
        if case .atLeastOnce(let stream, let durable, let redeliveryWait) = delivery {
            let jetStream = try self.jetStream()
            let retention = try jetStream.ensure(stream)
            guard !durable.isEmpty else {
                throw NATSError(.invalidOption, "at-least-once imports need a durable consumer name")
            }
            let specification = JetStreamContext.ConsumerSpecification(
                stream: stream.name, durable: durable, filter: subject, redeliveryWait: redeliveryWait,
                heartbeat: options.consumerHeartbeat, retention: retention)
            subscribeSubject = try jetStream.ensureConsumer(specification)
            consumer = PushConsumer(
                imported: imported, connection: connection, jetStream: jetStream, specification: specification,
                status: status)
        }
        // cnats' references: to the import, or to its consumer (which holds cnats' reference to the import).
        let closure =
            consumer.map { Unmanaged.passRetained($0).toOpaque() } ?? Unmanaged.passRetained(imported).toOpaque()
        let onMessage = consumer == nil ? ImportedSubject.onMessage : PushConsumer.onMessage
        let onComplete = consumer == nil ? ImportedSubject.onComplete : PushConsumer.onComplete
        // Denials of this subscription reach this import, not the connection's last error, which
        // may be an older denial (of an import made before a reload granted the subject) or a
        // later one (of an export's publish).
        let attempt = callbacks.denials.beginSubscription(subscribeSubject)
        var subscription: OpaquePointer?
        let result = subscribeSubject.withCString {
            natsConnection_Subscribe(&subscription, connection.pointer, $0, onMessage, closure)
        }
        if let error = NATSError.from(result, "subscribing to \(subject)") {
            _ = callbacks.denials.endSubscription(attempt, connection: nil, deadline: Date())
            if let consumer {
                Unmanaged<PushConsumer>.fromOpaque(closure).release()
                Unmanaged<ImportedSubject>.fromOpaque(consumer.importedClosure).release()
            } else {
                Unmanaged<ImportedSubject>.fromOpaque(closure).release()
            }
            throw error
        }
        let pointer = subscription!
        let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer)))
        callbacks.importSubjects.withLock { $0[address] = subject }
        imported.subscription.withLock { $0 = pointer }
        if let error = NATSError.from(
            natsSubscription_SetOnCompleteCB(pointer, onComplete, closure),
            "watching the subscription to \(subject) for completion")
        {
            // Without an on-complete callback close could not wait. The message callback may
            // still run once, so `imported` keeps cnats' reference (a small, bounded leak on a
            // path cnats takes only for a subscription already closed).
            _ = natsSubscription_Unsubscribe(pointer)
            natsSubscription_Destroy(pointer)
            _ = callbacks.denials.endSubscription(attempt, connection: nil, deadline: Date())
            throw error
        }
        imported.wasSubscribed.store(true, ordering: .releasing)
        _ = natsSubscription_SetPendingLimits(
            pointer, Int32(clamping: options.pendingLimits.messages), Int32(clamping: options.pendingLimits.bytes))
        if let consumer {
            handle.consumer.withLock { $0 = consumer }
            consumer.startWatching()
        }
        let closed = state.withLock { state -> Bool in
            if state.isClosed { return true }
            state.imports[ObjectIdentifier(handle)] = handle
            return false
        }
        if closed {
            handle.stop()
            _ = callbacks.denials.endSubscription(attempt, connection: nil, deadline: Date())
            throw NATSError(.closed, "the bridge is closed")
        }
        // The subscription is known to the server before the import is returned, and a denial
        // of it has arrived: the server answers a subscription it refuses before the flush's PONG,
        // and the denial reaches `attempt` on cnats' callback thread (which cannot be waited for
        // from that thread itself: an import made by a status observer learns a denial later, as
        // an `.error`).
        let deadline = Date().addingTimeInterval(Self.subscriptionCheckSeconds)
        _ = natsConnection_FlushTimeout(connection.pointer, Int64(Self.subscriptionCheckSeconds * 1000))
        let denial = callbacks.denials.endSubscription(
            attempt, connection: callbacks.isCallbackThread ? nil : connection.pointer, deadline: deadline)
        if let denial {
            handle.cancel()
            throw NATSError(.authorizationFailed, "not permitted to subscribe to \(subject): \(denial)")
        }
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSBridge {
    // MARK: Checking names

    /// A key for an error message: its first 40 characters.
    static func abbreviated(_ key: some Any) -> String {
        let text = String(describing: key)
        return text.count > 40 ? "\"\(text.prefix(40))…\" (\(text.count) characters)" : "\"\(text)\""
    }

    /// Refuses a stream or durable consumer name that breaks nats-server's rules for names (see
    /// `NATSNames`), or one too long for the JetStream API subjects it goes
    /// into (`$JS.API.STREAM.CREATE.<stream>`, `$JS.API.CONSUMER.DURABLE.CREATE.<stream>.<durable>`):
    /// sent, such a subject makes the server close the connection, as any subject over
    /// `NATSSubject.maximumProtocolSubjectBytes` does.
    static func checkJetStreamNames(_ delivery: NATSDelivery, consumer: Bool) throws(NATSError) {
        guard case .atLeastOnce(let stream, let durable, _) = delivery else { return }
        try stream.checkSettings()
        if consumer, !durable.isEmpty, let problem = NATSNames.assetNameProblem(durable) {
            throw NATSError(
                .invalidOption, "durable consumer name \(abbreviated(durable)) cannot be used: \(problem)")
        }
        let (subject, what) =
            consumer
            ? (
                "$JS.API.CONSUMER.DURABLE.CREATE.\(stream.name).\(durable)",
                "the JetStream subject of stream \(abbreviated(stream.name)) and consumer \(abbreviated(durable))"
            )
            : ("$JS.API.STREAM.CREATE.\(stream.name)", "the JetStream subject of stream \(abbreviated(stream.name))")
        if let problem = NATSSubject.protocolLengthProblem(subject, what: what) {
            throw NATSError(.invalidOption, problem)
        }
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension ConnectionCallbacks {
    /// Marks the thread cnats runs connection callbacks on with the connection's callbacks: cnats
    /// runs every connection's callbacks on one thread of its own, so each callback marks it
    /// again with its own.
    static let callbackThreadKey: pthread_key_t = makeThreadKey()

    static func markCallbackThread(_ closure: UnsafeMutableRawPointer?) {
        if pthread_getspecific(callbackThreadKey) != closure {
            pthread_setspecific(callbackThreadKey, closure)
        }
    }

    /// Whether the calling thread runs (or last ran) this connection's callbacks.
    var isCallbackThread: Bool {
        pthread_getspecific(Self.callbackThreadKey) == Unmanaged.passUnretained(self).toOpaque()
    }
}
