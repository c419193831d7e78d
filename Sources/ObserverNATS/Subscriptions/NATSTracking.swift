import ObserverSwift

extension LiveSubscription.Kind {
    /// A ``NATSBridge`` export: the subscription that publishes an event's
    /// values (its detail is the subject).
    public static let natsExport = LiveSubscription.Kind("NATS export")
    /// A ``NATSBridge`` import: what a subject's messages are sent into (its
    /// detail is the subject or pattern).
    public static let natsImport = LiveSubscription.Kind("NATS import")
}

extension NATSDelivery {
    /// How an import receives, in the words of `ObserverCore.liveSubscriptions`.
    var trackingDescription: String {
        switch self {
        case .atMostOnce: "NATS at most once"
        case .atLeastOnce(let stream, _, _): "NATS at least once (stream \(stream.name))"
        }
    }
}
