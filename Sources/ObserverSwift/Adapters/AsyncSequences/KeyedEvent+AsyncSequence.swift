extension KeyedEvent where Value: Sendable {
    /// Every value sent for `key` from now on, as an `AsyncSequence`
    /// buffered by `bufferingPolicy` (unbounded by default). The
    /// subscription ends when the consuming task is cancelled or the sequence
    /// and its iterator are dropped; the sequence finishes when the event is
    /// deallocated.
    ///
    /// <!-- snippet: fragment of ValueStreams -->
    /// ```swift
    /// for await price in quotes.values(forKey: "ACME", bufferingPolicy: .bufferingNewest(1)) {
    ///     show(price)
    /// }
    /// ```
    public func values(
        forKey key: Key, bufferingPolicy: ObserverBufferingPolicy = .unbounded
    ) -> ObserverValues<Value> {
        ObserverValues(bufferingPolicy: bufferingPolicy) { yield in
            subscribe(key: key) { value in yield(value) }
        }
    }
}
