/// How an export publishes and how an import receives.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public enum NATSDelivery: Sendable, Equatable {
    /// Core NATS: fastest; a message published while no server holds the import's
    /// subscription is lost, and imports report every lost message as a
    /// ``NATSStatus/gap(subject:publisher:missed:)``.
    case atMostOnce
    /// JetStream: exports publish into `stream` and republish until the server
    /// acknowledges; imports consume through the durable consumer `durable`,
    /// acknowledge after local delivery, and deliver each message to observers once.
    case atLeastOnce(stream: NATSStream, durable: String = "", redeliveryWait: Duration = .seconds(2))
}
