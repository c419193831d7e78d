extension Event where Value: Sendable {
    /// Every value sent from now on, as an `AsyncSequence`, buffered without
    /// bound. See ``values(bufferingPolicy:)``.
    public var values: ObserverValues<Value> {
        values(bufferingPolicy: .unbounded)
    }

    /// Every value sent from now on, as an `AsyncSequence` buffered by
    /// `bufferingPolicy`. The subscription ends when the consuming task is
    /// cancelled or the sequence and its iterator are dropped.
    ///
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
