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
        var next = remaining.next()
        while let value = next {
            triggers.increment(by: reader)
            // Loaded per value: a handler (or another thread) may subscribe
            // or cancel. Loaded inside the section, so a sole handler found
            // is not released before it ends, and its address is not reused.
            guard let loaded = observers.word.load(ordering: .acquiring) else {
                next = remaining.next()
                continue
            }
            if EventObservers<Value>.Sole.isTagged(loaded) {
                // One plain closure and no list: call it for as long as the
                // word still holds it, which is what a send of each value
                // would call.
                EventObservers<Value>.Sole.fromTagged(loaded)._withUnsafeGuaranteedRef { sole in
                    sole.closure.call(value)
                    next = remaining.next()
                    while let value = next, observers.word.load(ordering: .acquiring) == loaded {
                        triggers.increment(by: reader)
                        sole.closure.call(value)
                        next = remaining.next()
                    }
                }
                continue
            }
            let slots = Unmanaged<Slots>.fromOpaque(loaded)
            slots._withUnsafeGuaranteedRef { slots in
                if let sole = slots.soleVisibleHandler(of: Value.self) {
                    // One plain closure subscription in the list: call its
                    // closure directly for as long as the list holds that
                    // cell alone.
                    let handler = sole.cell.pointee.handler
                    handler(value)
                    next = remaining.next()
                    while let value = next, slots.stillHasOnly(sole) {
                        triggers.increment(by: reader)
                        handler(value)
                        next = remaining.next()
                    }
                } else {
                    Slots.sendInSection(value, to: slots.pointer) { $0.receive((), value) }
                    next = remaining.next()
                }
            }
        }
        reader.end()
    }
}
