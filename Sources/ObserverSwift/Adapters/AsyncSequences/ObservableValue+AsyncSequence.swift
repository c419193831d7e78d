extension ObservableValue where Value: Sendable {
    /// The current value, then every value set from now on, as an
    /// `AsyncSequence` (unbounded buffer). See ``values(bufferingPolicy:)``.
    public var values: ObserverValues<Value> {
        values(bufferingPolicy: .unbounded)
    }

    /// The current value, then every value set from now on — with no gap and
    /// no repeat, even while other threads set it — buffered by
    /// `bufferingPolicy`. Ends when the consuming task is cancelled or the
    /// sequence and its iterator are dropped; finishes when the value is
    /// deallocated.
    ///
    /// <!-- snippet: fragment of ValueStreams -->
    /// ```swift
    /// for await temperature in thermostat.target.values(bufferingPolicy: .bufferingNewest(1)) {
    ///     display(temperature)
    /// }
    /// ```
    public func values(bufferingPolicy: ObserverBufferingPolicy) -> ObserverValues<Value> {
        ObserverValues(bufferingPolicy: bufferingPolicy) { yield in
            replaying.subscribe(delivery: .synchronous) { value in yield(value) }
        }
    }
}
