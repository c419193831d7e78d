import ObserverEngine

extension ObserverSource {
    /// A closure subscription on the sending thread whose creation site is
    /// `fileID`/`line` (ObserverSwiftTesting's recorders pass the line of
    /// their `record()` call).
    package func subscribe(
        trackedAt fileID: StaticString, line: UInt, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribeClosure(delivery: .synchronous, limit: nil, fileID: fileID, line: line, handler)
    }
}

extension ObserverSource {
    /// A closure subscription on the sending thread listed, while tracking
    /// is on, as `kind` with `detail`, made at `fileID`/`line` (ObserverNATS's
    /// exports: the subscription that publishes is the export).
    @usableFromInline
    package func subscribe(
        trackedAs kind: LiveSubscription.Kind, detail: @autoclosure () -> String, fileID: StaticString, line: UInt,
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        guard SubscriptionTracking.isOn else {
            return storeClosure(delivery: .synchronous, limit: nil, handler)
        }
        let record = TrackedSubscription(
            kind, of: Self.self, delivery: .synchronous, fileID: fileID, line: line, detail: detail())
        return record.attach(storeClosure(delivery: .synchronous, limit: nil, record.counting(handler)))
    }
}

extension KeyedEvent {
    /// ``ObserverSource/subscribe(trackedAs:detail:fileID:line:_:)`` for one key.
    @usableFromInline
    package func subscribe(
        key: Key, trackedAs kind: LiveSubscription.Kind, detail: @autoclosure () -> String, fileID: StaticString,
        line: UInt, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        KeyScope(self, key).subscribe(trackedAs: kind, detail: detail(), fileID: fileID, line: line, handler)
    }

    /// ``ObserverSource/subscribe(trackedAt:line:_:)`` for one key.
    package func subscribe(
        key: Key, trackedAt fileID: StaticString, line: UInt, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        KeyScope(self, key).subscribe(trackedAt: fileID, line: line, handler)
    }
}
