import ObserverEngine

extension KeyedEvent {
    /// Sends every value of `values` to `key`, in order, from one read
    /// section: the same deliveries as calling ``send(_:forKey:)`` for each
    /// value in turn, hashing the key once.
    ///
    /// ```swift
    /// let prices = KeyedEvent<String, Double>()
    /// let token = prices.subscribe(key: "ACME") { print("ACME at", $0) }
    /// prices.send(contentsOf: [10.5, 10.75, 10.25], forKey: "ACME")   // three lines
    /// token.cancel()
    /// ```
    ///
    /// Each value goes to the key's subscriptions present when its turn
    /// comes, all of them before the next value: a subscription added by a
    /// handler receives the following values, one cancelled by a handler (or
    /// spent by its `limit:`) receives none of them. Memory that observers
    /// removed meanwhile is reclaimed only after the section ends, so pass
    /// bursts, not an endless sequence.
    @inlinable
    public func send<Values: Sequence>(contentsOf values: Values, forKey key: Key) where Values.Element == Value {
        let hash = AnyKeyedSlotLists.hash(key)
        withReadSection {
            for value in values {
                // Looked up per value: a handler (or another thread) may
                // subscribe, cancel or make the lists.
                observers.sendInSection(value, forKey: key, hash: hash)
            }
        }
    }
}
