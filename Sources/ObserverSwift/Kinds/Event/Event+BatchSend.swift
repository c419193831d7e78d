extension Event {
    /// Sends every value of `values`, in order, from one read section: the
    /// same deliveries as calling ``send(_:)`` for each value in turn, for a
    /// producer that has a burst at hand.
    ///
    /// ```swift
    /// let samples = Event<Int>()
    /// let token = samples.subscribe { sample in print("sample", sample) }
    /// samples.send(contentsOf: [3, 1, 4])   // prints 3, 1, 4, in order
    /// token.cancel()
    /// ```
    ///
    /// Each value is delivered as a send of its own would deliver it: to the
    /// subscriptions present when its turn comes, each synchronous one on the
    /// calling thread in subscription-slot order, all of them before the next
    /// value. So a subscription added by a handler receives the following
    /// values; one cancelled by a handler (or spent by its `limit:`, which
    /// stays exact) receives none of them; a handler may send again, to this
    /// or any event. ``triggersCount`` grows by one per value.
    ///
    /// The call enters the read section once instead of once per value
    /// (the section's entry is most of the cost of a send to one observer).
    /// Memory that observers removed meanwhile is reclaimed only after the
    /// section ends, so pass bursts, not an endless sequence, and a sequence
    /// whose iteration does not wait.
    @inlinable
    public func send<Values: Sequence>(contentsOf values: Values) where Values.Element == Value {
        let reader = SectionReader.current
        reader.begin()
        var remaining = values.makeIterator()
        observers.send(each: &remaining, inSectionOf: reader)
        reader.end()
    }
}
