/// What a producer's connect closure returns: tears the connection down.
/// Called exactly once, when the subscription is unsubscribed.
public typealias Disconnect = () -> Void

/// A disconnect that does nothing, for producers with nothing to tear down.
/// (A function rather than IndefiniteObservable's closure constant, so that
/// it is concurrency-safe; `return noopDisconnect` reads the same.)
///
/// ```swift
/// let five = ValueObservable<Int> { observer in
///     observer.next(5)
///     return noopDisconnect
/// }
/// ```
public func noopDisconnect() {}
