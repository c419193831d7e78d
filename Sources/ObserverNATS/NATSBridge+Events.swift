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
    ///   empty tokens or whitespace; ``NATSError/Kind/closed`` after ``close()``;
    ///   a JetStream error when the stream of `.atLeastOnce` cannot be created.
    @discardableResult
    public func export<Value: NATSWireValue>(
        _ event: Event<Value>, to subject: String, delivery: NATSDelivery = .atMostOnce
    ) throws(NATSError) -> NATSExport {
        try export(event, to: subject, codec: .binary, delivery: delivery)
    }

    /// ``export(_:to:delivery:)`` with an explicit codec (`.json` for `Codable` values).
    @discardableResult
    public func export<Value>(
        _ event: Event<Value>, to subject: String, codec: NATSCodec<Value>, delivery: NATSDelivery = .atMostOnce
    ) throws(NATSError) -> NATSExport {
        try checkOpen()
        guard NATSSubject.isValidPublishSubject(subject) else {
            throw NATSError(.invalidSubject, "\"\(subject)\" is not a subject to publish to (no wildcards, no spaces)")
        }
        let publisher = try makePublisher(for: event, codec: codec, delivery: delivery)
        let subscription = event.subscribe { value in publisher.publish(value, to: subject) }
        let export = NATSExport(
            subscriptions: [subscription], publishers: [publisher.publisher],
            failures: { publisher.failures.load(ordering: .relaxed) }, bridge: self)
        try register(export)
        return export
    }

    /// Publishes the values sent on `event` for each of `keys` to `prefix.<key tokens>`
    /// (see ``NATSSubjectKey`` for how keys become tokens). Keys are listed up front:
    /// a `KeyedEvent` is observed per key.
    @discardableResult
    public func export<Key: NATSSubjectKey, Value: NATSWireValue>(
        _ event: KeyedEvent<Key, Value>, keys: some Sequence<Key>, toPrefix prefix: String,
        delivery: NATSDelivery = .atMostOnce
    ) throws(NATSError) -> NATSExport {
        try export(event, keys: keys, toPrefix: prefix, codec: .binary, delivery: delivery)
    }

    /// ``export(_:keys:toPrefix:delivery:)`` with an explicit codec.
    @discardableResult
    public func export<Key: NATSSubjectKey, Value>(
        _ event: KeyedEvent<Key, Value>, keys: some Sequence<Key>, toPrefix prefix: String, codec: NATSCodec<Value>,
        delivery: NATSDelivery = .atMostOnce
    ) throws(NATSError) -> NATSExport {
        try checkOpen()
        guard NATSSubject.isValidPublishSubject(prefix) else {
            throw NATSError(.invalidSubject, "\"\(prefix)\" is not a subject prefix (no wildcards, no spaces)")
        }
        var subjects: [(Key, String)] = []
        for key in keys {
            guard let subject = NATSSubject.subject(prefix: prefix, key: key) else {
                throw NATSError(
                    .invalidSubject, "key \(key) has no valid subject tokens (empty, or with . * > or whitespace)")
            }
            subjects.append((key, subject))
        }
        // One publisher per key: each subject carries its own sequence numbers, so an import
        // of some of the keys sees every number of the publishers it receives.
        var created: [ExportedPublisher<Value>] = []
        for _ in subjects { created.append(try makePublisher(for: event, codec: codec, delivery: delivery)) }
        let publishers = created
        let subscriptions = zip(subjects, publishers).map { entry, publisher in
            let subject = entry.1
            return event.subscribe(key: entry.0) { value in publisher.publish(value, to: subject) }
        }
        let export = NATSExport(
            subscriptions: subscriptions, publishers: publishers.map(\.publisher),
            failures: { publishers.reduce(0) { $0 + $1.failures.load(ordering: .relaxed) } }, bridge: self)
        try register(export)
        return export
    }

    func makePublisher<Value>(
        for event: AnyObject, codec: NATSCodec<Value>, delivery: NATSDelivery
    ) throws(NATSError) -> ExportedPublisher<Value> {
        var jetStream: JetStreamContext?
        if case .atLeastOnce(let stream, _, _) = delivery {
            let context = try self.jetStream()
            try context.ensure(stream)
            jetStream = context
        }
        return ExportedPublisher(
            connection: connection, jetStream: jetStream, codec: codec, eventIdentity: ObjectIdentifier(event),
            status: status)
    }

    // MARK: Importing

    /// Sends every value published to `subject` (a pattern may use `*` and `>`)
    /// into `event`, through its ordinary `send`: every kind of observer receives it.
    ///
    /// - Throws: ``NATSError/Kind/invalidSubject`` for a malformed pattern;
    ///   ``NATSError/Kind/closed`` after ``close()``; a JetStream error for `.atLeastOnce`.
    @discardableResult
    public func `import`<Value: NATSWireValue & Sendable>(
        _ subject: String, into event: Event<Value>, delivery: NATSDelivery = .atMostOnce
    ) throws(NATSError) -> NATSImport {
        try self.import(subject, into: event, codec: .binary, delivery: delivery)
    }

    /// ``import(_:into:delivery:)`` with an explicit codec.
    @discardableResult
    public func `import`<Value: Sendable>(
        _ subject: String, into event: Event<Value>, codec: NATSCodec<Value>, delivery: NATSDelivery = .atMostOnce
    ) throws(NATSError) -> NATSImport {
        guard NATSSubject.isValidPattern(subject) else {
            throw NATSError(.invalidSubject, "\"\(subject)\" is not a subject or pattern")
        }
        let decode = codec.decode
        let imported = ImportedSubject(
            subject: subject, connection: connection, eventIdentity: ObjectIdentifier(event),
            expectedTag: codec.tag, guarantee: Self.guarantee(delivery), status: status
        ) { _, payload in
            guard let value = try? decode(payload) else { return false }
            event.send(value)
            return true
        }
        return try register(imported, subject: subject, delivery: delivery)
    }

    /// Sends every value published under `prefix` whose key tokens match `pattern`
    /// (`*` one token, `>` the rest, or literal tokens) into `event` for the key the
    /// tokens stand for. A subject whose tokens are not a key counts as malformed.
    ///
    /// Every exported key has its own publisher identity and sequence numbers, so
    /// gaps are reported for any pattern.
    @discardableResult
    public func `import`<Key: NATSSubjectKey & Sendable, Value: NATSWireValue & Sendable>(
        prefix: String, matching pattern: String = ">", into event: KeyedEvent<Key, Value>,
        delivery: NATSDelivery = .atMostOnce
    ) throws(NATSError) -> NATSImport {
        try self.import(prefix: prefix, matching: pattern, into: event, codec: .binary, delivery: delivery)
    }

    /// ``import(prefix:matching:into:delivery:)`` with an explicit codec.
    @discardableResult
    public func `import`<Key: NATSSubjectKey & Sendable, Value: Sendable>(
        prefix: String, matching pattern: String = ">", into event: KeyedEvent<Key, Value>,
        codec: NATSCodec<Value>, delivery: NATSDelivery = .atMostOnce
    ) throws(NATSError) -> NATSImport {
        let subject = prefix + "." + pattern
        guard NATSSubject.isValidPublishSubject(prefix), NATSSubject.isValidPattern(subject) else {
            throw NATSError(.invalidSubject, "\"\(prefix)\" + \"\(pattern)\" is not a subject pattern")
        }
        let decode = codec.decode
        let prefixLength = prefix.utf8.count + 1
        let imported = ImportedSubject(
            subject: subject, connection: connection, eventIdentity: ObjectIdentifier(event),
            expectedTag: codec.tag, guarantee: Self.guarantee(delivery), status: status
        ) { subjectPointer, payload in
            let received = String(cString: subjectPointer)
            guard received.utf8.count > prefixLength else { return false }
            let tokens = received.utf8.dropFirst(prefixLength).split(
                separator: UInt8(ascii: "."), omittingEmptySubsequences: false
            ).map { Substring($0) }
            guard let key = Key(natsSubjectTokens: tokens), let value = try? decode(payload) else { return false }
            event.send(value, forKey: key)
            return true
        }
        return try register(imported, subject: subject, delivery: delivery)
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
