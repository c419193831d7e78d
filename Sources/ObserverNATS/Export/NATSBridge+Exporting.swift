import CNATS
import ObserverSwift

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSBridge {
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
}
