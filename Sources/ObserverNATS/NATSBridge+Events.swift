import CNATS
import ObserverSwift

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSBridge {
    // MARK: Exporting

    /// Publishes every value sent on `event` to `subject`, from inside the local
    /// `send` (on the sending thread, without waiting for the network).
    ///
    /// A value that arrived through an import of this bridge into the same event
    /// is not published again, so two processes that both import and export one
    /// subject do not bounce values back and forth.
    ///
    /// - Throws: ``NATSError/Kind/invalidSubject`` for a subject with wildcards,
    ///   empty tokens or whitespace, one longer than ``NATSSubject/maximumSubjectBytes``, or one
    ///   this bridge exports the other way (at most once and at least once are not mixed on one
    ///   subject); ``NATSError/Kind/closed`` after ``close(timeout:)``;
    ///   a JetStream error when the stream of `.atLeastOnce` cannot be created.
    @inlinable
    @discardableResult
    public func export<Value: NATSWireValue>(
        _ event: Event<Value>, to subject: String, delivery: NATSDelivery = .atMostOnce,
        fileID: StaticString = #fileID, line: UInt = #line
    ) throws(NATSError) -> NATSExport {
        try export(event, to: subject, codec: .binary, delivery: delivery, fileID: fileID, line: line)
    }

    /// ``export(_:to:delivery:fileID:line:)`` with an explicit codec (`.json` for `Codable` values).
    ///
    /// A value the codec cannot encode is not published: it counts in
    /// ``NATSExport/failedPublishes`` and is reported as ``NATSStatus/publishFailed(subject:error:)``.
    @inlinable
    @discardableResult
    public func export<Value>(
        _ event: Event<Value>, to subject: String, codec: NATSCodec<Value>, delivery: NATSDelivery = .atMostOnce,
        fileID: StaticString = #fileID, line: UInt = #line
    ) throws(NATSError) -> NATSExport {
        let publisher = try makePublisher(for: event, subject: subject, tag: codec.tag, delivery: delivery)
        let withFrame = codec.withFrame
        let subscription = event.subscribe(
            trackedAs: .natsExport, detail: "subject \(subject)", fileID: fileID, line: line
        ) { value in Self.publish(value, withFrame, publisher) }
        return try register(subscriptions: [subscription], publishers: [publisher])
    }

    /// Publishes the values sent on `event` for each of `keys` to `prefix.<key tokens>`
    /// (see ``NATSSubjectKey`` for how keys become tokens). Keys are listed up front:
    /// a `KeyedEvent` is observed per key.
    @inlinable
    @discardableResult
    public func export<Key: NATSSubjectKey, Value: NATSWireValue>(
        _ event: KeyedEvent<Key, Value>, keys: some Sequence<Key>, toPrefix prefix: String,
        delivery: NATSDelivery = .atMostOnce, fileID: StaticString = #fileID, line: UInt = #line
    ) throws(NATSError) -> NATSExport {
        try export(event, keys: keys, toPrefix: prefix, codec: .binary, delivery: delivery, fileID: fileID, line: line)
    }

    /// ``export(_:keys:toPrefix:delivery:fileID:line:)`` with an explicit codec.
    @inlinable
    @discardableResult
    public func export<Key: NATSSubjectKey, Value>(
        _ event: KeyedEvent<Key, Value>, keys: some Sequence<Key>, toPrefix prefix: String, codec: NATSCodec<Value>,
        delivery: NATSDelivery = .atMostOnce, fileID: StaticString = #fileID, line: UInt = #line
    ) throws(NATSError) -> NATSExport {
        let keyed = try makePublishers(for: event, keys: keys, prefix: prefix, tag: codec.tag, delivery: delivery)
        let withFrame = codec.withFrame
        let subscriptions = keyed.map { key, publisher in
            event.subscribe(
                key: key, trackedAs: .natsExport, detail: "key \(key), prefix \(prefix)", fileID: fileID, line: line
            ) { value in Self.publish(value, withFrame, publisher) }
        }
        return try register(subscriptions: subscriptions, publishers: keyed.map(\.publisher))
    }

    /// The body of every export's subscription, specialized where the export is made:
    /// encodes `value` into a stack buffer after the header's room and publishes it.
    @inlinable @inline(__always)
    static func publish<Value>(
        _ value: Value, _ withFrame: (Value, Int, (UnsafeMutableRawBufferPointer) -> Void) -> Bool,
        _ publisher: ExportedPublisher
    ) {
        if publisher.isRemoteEcho() { return }
        if !withFrame(value, FrameHeader.size, { frame in publisher.publish(frame) }) {
            publisher.reportUnencodable()
        }
    }

    /// The publisher of an export of `event` to `subject`, after checking that the bridge
    /// is open and the subject is one to publish to.
    @usableFromInline
    func makePublisher(
        for event: AnyObject, subject: String, tag: UInt8, delivery: NATSDelivery
    ) throws(NATSError) -> ExportedPublisher {
        try checkOpen()
        if let problem = NATSSubject.lengthProblem(subject, what: "the subject") {
            throw NATSError(.invalidSubject, problem)
        }
        guard NATSSubject.isValidPublishSubject(subject) else {
            throw NATSError(.invalidSubject, "\"\(subject)\" is not a subject to publish to (no wildcards, no spaces)")
        }
        return try publisher(for: event, subject: subject, tag: tag, delivery: delivery)
    }

    /// One publisher per key, each with its subject under `prefix`.
    @usableFromInline
    func makePublishers<Key: NATSSubjectKey>(
        for event: AnyObject, keys: some Sequence<Key>, prefix: String, tag: UInt8, delivery: NATSDelivery
    ) throws(NATSError) -> [(key: Key, publisher: ExportedPublisher)] {
        try checkOpen()
        if let problem = NATSSubject.lengthProblem(prefix, what: "the prefix") {
            throw NATSError(.invalidSubject, problem)
        }
        guard NATSSubject.isValidPublishSubject(prefix) else {
            throw NATSError(.invalidSubject, "\"\(prefix)\" is not a subject prefix (no wildcards, no spaces)")
        }
        var subjects: [(Key, String)] = []
        // A key listed twice (or two spellings of one key, equal under `==`) is exported once:
        // two subscriptions of one key would publish each of its sends twice.
        var listed = Set<Key>()
        var keyBySubject: [String: Key] = [:]
        for key in keys where listed.insert(key).inserted {
            guard let subject = NATSSubject.subject(prefix: prefix, key: key) else {
                throw NATSError(
                    .invalidSubject, "key \(key) has no valid subject tokens (empty, or with . * > or whitespace)")
            }
            if let problem = NATSSubject.lengthProblem(subject, what: "the subject of key \(Self.abbreviated(key))") {
                throw NATSError(.invalidSubject, problem)
            }
            if let other = keyBySubject.updateValue(key, forKey: subject) {
                throw NATSError(
                    .invalidSubject,
                    "keys \(Self.abbreviated(other)) and \(Self.abbreviated(key)) are not equal but have one subject, "
                        + "\(subject) (NATSSubjectKey: keys that differ need tokens that differ)")
            }
            subjects.append((key, subject))
        }
        // One publisher per key: each subject carries its own sequence numbers, so an import
        // of some of the keys sees every number of the publishers it receives.
        var publishers: [(key: Key, publisher: ExportedPublisher)] = []
        do {
            for (key, subject) in subjects {
                publishers.append((key, try publisher(for: event, subject: subject, tag: tag, delivery: delivery)))
            }
        } catch {
            // No export is made: the denials of these subjects are not theirs.
            for made in publishers { callbacks.denials.unregister(made.publisher) }
            throw error
        }
        return publishers
    }

    func publisher(
        for event: AnyObject, subject: String, tag: UInt8, delivery: NATSDelivery
    ) throws(NATSError) -> ExportedPublisher {
        try Self.checkJetStreamNames(delivery, consumer: false)
        var jetStream: JetStreamContext?
        if case .atLeastOnce(let stream, _, _) = delivery {
            let context = try self.jetStream()
            try context.ensure(stream)
            try context.checkStored(subject, in: stream.name)
            jetStream = context
        }
        let publisher = ExportedPublisher(
            connection: connection, jetStream: jetStream, subject: subject, tag: tag,
            eventIdentity: ObjectIdentifier(event), status: status, batching: try batchSettings())
        if case .atLeastOnce(let stream, _, _) = delivery {
            if let problem = callbacks.denials.registerAtLeastOnce(subject) {
                throw NATSError(.invalidSubject, problem)
            }
            jetStream?.register(publisher, stream: stream.name)
        } else if let problem = callbacks.denials.register(publisher) {
            throw NATSError(.invalidSubject, problem)
        }
        return publisher
    }

    /// Registers the export made of `subscriptions` (stopping them when the bridge is closed).
    @usableFromInline
    func register(subscriptions: [Subscription], publishers: [ExportedPublisher]) throws(NATSError) -> NATSExport {
        let export = NATSExport(subscriptions: subscriptions, publishers: publishers, bridge: self)
        try register(export)
        return export
    }

    // MARK: Importing

    /// Sends every value published to `subject` (a pattern may use `*` and `>`)
    /// into `event`, through its ordinary `send`: every kind of observer receives it.
    ///
    /// - Throws: ``NATSError/Kind/invalidSubject`` for a malformed pattern;
    ///   ``NATSError/Kind/closed`` after ``close(timeout:)``; a JetStream error for `.atLeastOnce`.
    @inlinable
    @discardableResult
    public func `import`<Value: NATSWireValue & Sendable>(
        _ subject: String, into event: Event<Value>, delivery: NATSDelivery = .atMostOnce,
        fileID: StaticString = #fileID, line: UInt = #line
    ) throws(NATSError) -> NATSImport {
        try self.import(subject, into: event, codec: .binary, delivery: delivery, fileID: fileID, line: line)
    }

    /// ``import(_:into:delivery:fileID:line:)`` with an explicit codec.
    @inlinable
    @discardableResult
    public func `import`<Value: Sendable>(
        _ subject: String, into event: Event<Value>, codec: NATSCodec<Value>, delivery: NATSDelivery = .atMostOnce,
        fileID: StaticString = #fileID, line: UInt = #line
    ) throws(NATSError) -> NATSImport {
        let decode = codec.decode
        return try importFrames(
            subject, into: event, tag: codec.tag, delivery: delivery, fileID: fileID, line: line
        ) { _, payload in
            let value: Value
            do { value = try decode(payload) } catch { return false }
            event.send(value)
            return true
        }
    }

    /// Sends every value published under `prefix` whose key tokens match `pattern`
    /// (`*` one token, `>` the rest, or literal tokens) into `event` for the key the
    /// tokens stand for. A subject whose tokens are not a key counts as malformed.
    ///
    /// Every exported key has its own publisher identity and sequence numbers, so
    /// gaps are reported for any pattern.
    @inlinable
    @discardableResult
    public func `import`<Key: NATSSubjectKey & Sendable, Value: NATSWireValue & Sendable>(
        prefix: String, matching pattern: String = ">", into event: KeyedEvent<Key, Value>,
        delivery: NATSDelivery = .atMostOnce, fileID: StaticString = #fileID, line: UInt = #line
    ) throws(NATSError) -> NATSImport {
        try self.import(
            prefix: prefix, matching: pattern, into: event, codec: .binary, delivery: delivery, fileID: fileID,
            line: line)
    }

    /// The `KeyedEvent` `import(prefix:matching:into:delivery:)` with an explicit codec.
    @inlinable
    @discardableResult
    public func `import`<Key: NATSSubjectKey & Sendable, Value: Sendable>(
        prefix: String, matching pattern: String = ">", into event: KeyedEvent<Key, Value>,
        codec: NATSCodec<Value>, delivery: NATSDelivery = .atMostOnce, fileID: StaticString = #fileID,
        line: UInt = #line
    ) throws(NATSError) -> NATSImport {
        try importKeyed(
            prefix: prefix, matching: pattern, into: event, codec: codec, delivery: delivery, fileID: fileID, line: line
        ) {
            key, value in event.send(value, forKey: key)
        }
    }

    /// Every key's values under `prefix` whose key tokens match `pattern`, with their key, into
    /// one `Event`: what observes every key of a wildcard import, including keys nobody knew of
    /// in advance. The pattern, the errors, the gap reports and the malformed count are those of
    /// the import into a `KeyedEvent`.
    ///
    /// ```swift
    /// func watchEveryQuote(_ bridge: NATSBridge) throws -> Subscription {
    ///     let quotes = Event<NATSKeyedValue<String, Double>>()
    ///     let token = quotes.subscribe { quote in print(quote.key, quote.value) }
    ///     try bridge.import(prefix: "quotes", matching: "*", into: quotes)
    ///     return token
    /// }
    /// ```
    @inlinable
    @discardableResult
    public func `import`<Key: NATSSubjectKey & Sendable, Value: NATSWireValue & Sendable>(
        prefix: String, matching pattern: String = ">", into event: Event<NATSKeyedValue<Key, Value>>,
        delivery: NATSDelivery = .atMostOnce, fileID: StaticString = #fileID, line: UInt = #line
    ) throws(NATSError) -> NATSImport {
        try self.import(
            prefix: prefix, matching: pattern, into: event, codec: .binary, delivery: delivery, fileID: fileID,
            line: line)
    }

    /// The all-keys `import(prefix:matching:into:delivery:)` with an explicit codec.
    @inlinable
    @discardableResult
    public func `import`<Key: NATSSubjectKey & Sendable, Value: Sendable>(
        prefix: String, matching pattern: String = ">", into event: Event<NATSKeyedValue<Key, Value>>,
        codec: NATSCodec<Value>, delivery: NATSDelivery = .atMostOnce, fileID: StaticString = #fileID,
        line: UInt = #line
    ) throws(NATSError) -> NATSImport {
        try importKeyed(
            prefix: prefix, matching: pattern, into: event, codec: codec, delivery: delivery, fileID: fileID, line: line
        ) {
            key, value in event.send(NATSKeyedValue(key: key, value: value))
        }
    }

    /// The keyed imports' one body: subscribes to `prefix.pattern` and calls `deliver` with the
    /// key each subject's tokens stand for and the decoded value; a subject whose tokens are no
    /// key, or a value that does not decode, counts as malformed.
    @usableFromInline
    func importKeyed<Key: NATSSubjectKey & Sendable, Value: Sendable>(
        prefix: String, matching pattern: String, into event: AnyObject, codec: NATSCodec<Value>,
        delivery: NATSDelivery, fileID: StaticString? = nil, line: UInt = 0,
        deliver: @escaping @Sendable (Key, Value) -> Void
    ) throws(NATSError) -> NATSImport {
        let subject = try keyedPattern(prefix: prefix, matching: pattern, tokenCount: Key.natsSubjectTokenCount) {
            Key(natsSubjectTokens: $0) != nil
        }
        let decode = codec.decode
        let prefixLength = prefix.utf8.count + 1
        return try importFrames(
            subject, into: event, tag: codec.tag, delivery: delivery, fileID: fileID, line: line
        ) { subjectPointer, payload in
            let received = String(cString: subjectPointer)
            guard received.utf8.count > prefixLength else { return false }
            let tokens = received.utf8.dropFirst(prefixLength).split(
                separator: UInt8(ascii: "."), omittingEmptySubsequences: false
            ).map { Substring($0) }
            guard let key = Key(natsSubjectTokens: tokens) else { return false }
            let value: Value
            do { value = try decode(payload) } catch { return false }
            deliver(key, value)
            return true
        }
    }

    /// `prefix.pattern`, or an error when it is not a pattern under a publish subject, or when it
    /// can match no key: its count of tokens is not `tokenCount` (nil: any count), or it has no
    /// wildcard and `isKey` refuses its tokens.
    @usableFromInline
    func keyedPattern(
        prefix: String, matching pattern: String, tokenCount: Int?, isKey: ([Substring]) -> Bool
    ) throws(NATSError) -> String {
        let subject = prefix + "." + pattern
        if let problem = NATSSubject.lengthProblem(subject, what: "the pattern \"\(prefix)\" + \"\(pattern)\"") {
            throw NATSError(.invalidSubject, problem)
        }
        guard NATSSubject.isValidPublishSubject(prefix), NATSSubject.isValidPattern(subject) else {
            throw NATSError(.invalidSubject, "\"\(prefix)\" + \"\(pattern)\" is not a subject pattern")
        }
        let tokens = NATSSubject.tokens(of: pattern)
        let hint =
            "it matches no key (to import one key whose text has `.`, `*`, `>` or spaces, pass "
            + "NATSSubject.pattern(forKey:) as `matching:`: keys are escaped, \"a.b\" is the token a%2Eb)"
        if let tokenCount {
            let endsInRest = tokens.last.map { NATSSubject.isToken($0, ">") } ?? false
            let matchesCount = endsInRest ? tokens.count <= tokenCount : tokens.count == tokenCount
            guard matchesCount else {
                throw NATSError(
                    .invalidSubject,
                    "pattern \"\(pattern)\" has \(tokens.count) tokens and every key has \(tokenCount): \(hint)")
            }
        }
        if !tokens.contains(where: { NATSSubject.isToken($0, "*") || NATSSubject.isToken($0, ">") }) && !isKey(tokens) {
            throw NATSError(.invalidSubject, "pattern \"\(pattern)\" is no key's tokens: \(hint)")
        }
        return subject
    }

    /// A key for an error message: its first 40 characters.
    static func abbreviated(_ key: some Any) -> String {
        let text = String(describing: key)
        return text.count > 40 ? "\"\(text.prefix(40))…\" (\(text.count) characters)" : "\"\(text)\""
    }

    /// Subscribes an import of `subject` whose frames carry `tag`; `deliver` decodes a
    /// frame's payload and sends it into `event`, or returns false when it does not decode.
    @usableFromInline
    func importFrames(
        _ subject: String, into event: AnyObject, tag: UInt8, delivery: NATSDelivery, fileID: StaticString? = nil,
        line: UInt = 0,
        deliver: @escaping @Sendable (_ subject: UnsafePointer<CChar>, _ payload: UnsafeRawBufferPointer) -> Bool
    ) throws(NATSError) -> NATSImport {
        if let problem = NATSSubject.lengthProblem(subject, what: "the subject") {
            throw NATSError(.invalidSubject, problem)
        }
        guard NATSSubject.isValidPattern(subject) else {
            throw NATSError(.invalidSubject, "\"\(subject)\" is not a subject or pattern")
        }
        try Self.checkJetStreamNames(delivery, consumer: true)
        let imported = ImportedSubject(
            subject: subject, connection: connection, eventIdentity: ObjectIdentifier(event), expectedTag: tag,
            guarantee: Self.guarantee(delivery), status: status, registry: callbacks.importSubjects, deliver: deliver)
        let handle = try register(imported, subject: subject, delivery: delivery)
        if ObserverCore.isTrackingSubscriptions {
            TrackedSubscription(
                .natsImport, of: type(of: event), delivery: .synchronous, fileID: fileID, line: line,
                detail: "subject \(subject)", countsDeliveries: false, deliveryDescription: delivery.trackingDescription
            ).attachRetained(handle.subscription)
        }
        return handle
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

    static func guarantee(_ delivery: NATSDelivery) -> ImportedSubject.Guarantee {
        switch delivery {
        case .atMostOnce: .atMostOnce
        case .atLeastOnce: .atLeastOnce
        }
    }

    func register(_ imported: ImportedSubject, subject: String, delivery: NATSDelivery) throws(NATSError) -> NATSImport
    {
        let handle = NATSImport(imported: imported, bridge: self)
        try subscribe(imported, subject: subject, delivery: delivery, handle: handle)
        return handle
    }
}
