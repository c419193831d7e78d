extension ObserverSource {
    /// A closure subscription on the sending thread whose creation site is
    /// `fileID`/`line` (ObserverSwiftTesting's recorders pass the line of
    /// their `record()` call).
    package func subscribe(
        trackedAt fileID: StaticString, line: UInt, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribeClosure(replay: nil, delivery: .synchronous, limit: nil, fileID: fileID, line: line, handler)
    }
}

extension KeyedEvent {
    /// ``ObserverSource/subscribe(trackedAt:line:_:)`` for one key.
    package func subscribe(
        key: Key, trackedAt fileID: StaticString, line: UInt, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        KeyScope(self, key).subscribe(trackedAt: fileID, line: line, handler)
    }
}
