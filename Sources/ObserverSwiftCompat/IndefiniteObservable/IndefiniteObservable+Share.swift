import ObserverSwift

extension IndefiniteObservable {
    /// A stream sharing one connection of this one among all its
    /// subscribers.
    ///
    /// The first subscriber connects this stream (values sent during that
    /// connect reach it); later subscribers join the running connection and
    /// get the values sent from then on (no replay). Values fan out through
    /// the core's lock-free send path. When the last subscriber unsubscribes,
    /// the connection is disconnected; the next subscriber connects anew
    /// (that connect may overlap a disconnect still running on another
    /// thread).
    ///
    /// - Parameter makeObserver: builds the observer that forwards this
    ///   stream's values to the shared subscribers (the closure it gets).
    ///
    /// <!-- snippet: fragment of CustomObserverStream -->
    /// ```swift
    /// let shared = stream.share { forward in MyObserver(forward) }
    /// ```
    public func share(
        makeObserver: @escaping (_ forward: @escaping @Sendable (O.Value) -> Void) -> O
    ) -> IndefiniteObservable<O> where O: Sendable, O.Value: Sendable {
        let connection = SharedConnection(upstream: self, makeForwarder: makeObserver)
        return IndefiniteObservable(connection.connect)
    }

    /// ``share(makeObserver:)`` for value streams.
    ///
    /// <!-- snippet: fragment of TickingTimer -->
    /// ```swift
    /// let ticks = ValueObservable<Int> { observer in
    ///     let timer = startTimer { observer.next($0) }
    ///     return { timer.stop() }
    /// }.share()
    /// let a = ticks.subscribe { print("a", $0) }   // connects the timer
    /// let b = ticks.subscribe { print("b", $0) }   // shares it
    /// a.unsubscribe(); b.unsubscribe()             // stops the timer
    /// ```
    public func share<T: Sendable>() -> ValueObservable<T> where O == ValueObserver<T> {
        let connection = SharedConnection(upstream: self, makeForwarder: { ValueObserver($0) })
        return ValueObservable(connection.connect)
    }
}
