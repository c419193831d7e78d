/// One live subscription, as ``ObserverCore/liveSubscriptions`` lists it:
/// what it is, where it was made and how often its handler ran.
///
/// ```swift
/// ObserverCore.isTrackingSubscriptions = true
/// let saved = Event<Int>()
/// let token = saved.subscribe { count in print("saved", count) }
/// saved.send(1)
/// for subscription in ObserverCore.liveSubscriptions {
///     print(subscription)   // closure on Event<Int>, synchronous, made at …, 1 delivery
/// }
/// token.cancel()
/// ```
public struct LiveSubscription: Sendable, Hashable, CustomStringConvertible {
    /// What kind of subscription it is.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind in words, as the listing prints it.
        public let description: String

        /// A kind named `description` (the library's modules define theirs).
        package init(_ description: String) { self.description = description }

        /// A closure subscription (`subscribe { value in … }`, with or
        /// without `delivery:` or `limit:`).
        public static let closure = Kind("closure")
        /// A weak-target subscription (`subscribe(target) { target, value in … }`).
        public static let weakTarget = Kind("weak target")
        /// An actor subscription (`subscribe(isolatedTo:)`).
        public static let actor = Kind("actor")
        /// An observer added to an ``ObserverRegistry`` or a ``KeyedObserverRegistry``.
        public static let registryObserver = Kind("registry observer")
    }

    /// What kind of subscription it is.
    public let kind: Kind
    /// The type of what it observes (`Event<Int>`, `ObserverRegistry`, …).
    public let sourceType: String
    /// Where its handler runs, in words: `synchronous` (on the sending
    /// thread), `queue "label"`, `main actor`, `isolated to Actor`.
    public let delivery: String
    /// The file (`#fileID`) of the call that made it; nil when the call did
    /// not pass one.
    public let fileID: String?
    /// The line of that call; nil with `fileID`.
    public let line: Int?
    /// What else identifies it: a key, an observer's type, a NATS subject.
    public let detail: String?
    /// How many deliveries reached its handler so far; nil for a registry
    /// observer, whose protocol calls are not counted.
    public let deliveries: Int?
    /// How many deliveries are running its handler at this moment (nil as
    /// `deliveries`): a handler that never returns shows here.
    public let runningDeliveries: Int?

    /// `file:line` of the call that made it, or `unknown site`.
    public var site: String {
        guard let fileID, let line else { return "unknown site" }
        return "\(fileID):\(line)"
    }

    /// One line: kind, source type, delivery, site, detail, deliveries.
    public var description: String {
        var text = "\(kind) on \(sourceType), \(delivery), made at \(site)"
        if let detail { text += ", \(detail)" }
        if let deliveries { text += deliveries == 1 ? ", 1 delivery" : ", \(deliveries) deliveries" }
        if let runningDeliveries, runningDeliveries > 0 { text += " (\(runningDeliveries) running)" }
        return text
    }
}
