import CNATS
import ObserverSwift

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSBridge {
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
