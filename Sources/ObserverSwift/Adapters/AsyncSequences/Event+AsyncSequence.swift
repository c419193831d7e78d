extension Event where Value: Sendable {
    /// Every value sent from now on, as an `AsyncSequence`, buffered without
    /// bound. See ``values(bufferingPolicy:)``.
    ///
    /// The subscription starts when `values` is read, not when iteration
    /// starts: values sent in between are buffered. Read it before the sends
    /// you want to see (not inside a task that may start after them).
    public var values: ObserverValues<Value> {
        values(bufferingPolicy: .unbounded)
    }

    /// Every value sent from now on, as an `AsyncSequence` buffered by
    /// `bufferingPolicy`. The subscription starts now (values sent before the
    /// first `next()` are buffered) and ends when the consuming task is
    /// cancelled or the sequence and its iterator are dropped.
    ///
    /// <!-- snippet: fragment of ValueStreams -->
    /// ```swift
    /// for await reading in sensor.changed.values(bufferingPolicy: .bufferingNewest(8)) {
    ///     plot(reading)
    /// }
    /// ```
    public func values(bufferingPolicy: ObserverBufferingPolicy) -> ObserverValues<Value> {
        ObserverValues(bufferingPolicy: bufferingPolicy) { yield in
            subscribe { value in yield(value) }
        }
    }
}
