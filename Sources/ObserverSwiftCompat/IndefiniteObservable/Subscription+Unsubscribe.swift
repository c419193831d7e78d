import ObserverSwift

extension Subscription {
    /// IndefiniteObservable's spelling of `cancel()`: for a stream
    /// subscription, calls the producer's disconnect (exactly once, even
    /// when called again or from two threads at once); for any other
    /// subscription, removes it.
    ///
    /// <!-- snippet: fragment of IntObservable -->
    /// ```swift
    /// let subscription = observable.subscribe { print($0) }
    /// subscription.unsubscribe()
    /// ```
    ///
    /// Returns nothing, so that `subscription.unsubscribe` can itself be
    /// returned as a ``Disconnect``.
    public func unsubscribe() {
        cancel()
    }
}
