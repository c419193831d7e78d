extension Subscription: CustomDebugStringConvertible {
    /// What is known of the subscription: whether it is active and, when it
    /// was made while ``ObserverCore/isTrackingSubscriptions`` was on, its
    /// kind, source type, delivery, creation site and deliveries.
    ///
    /// `Subscription(active, closure on Event<Int>, synchronous, made at App/Model.swift:12, 3 deliveries)`
    public var debugDescription: String {
        let state = isActive ? "active" : "inactive"
        if let record = SubscriptionTracking.record(of: reference) {
            return "Subscription(\(state), \(record.snapshot))"
        }
        return "Subscription(\(state), not tracked)"
    }
}
