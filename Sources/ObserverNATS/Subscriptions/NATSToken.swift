import ObserverSwift

/// What a `Subscription` made of one of the bridge's tokens (``NATSExport``, ``NATSImport``,
/// ``NATSMirror``) calls: cancelling it is the token's `cancel()`, and it is active while the
/// token's `isActive` is true.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
package protocol NATSToken: SubscriptionCanceller {
    @discardableResult
    func cancel() -> Bool
    var isActive: Bool { get }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension NATSToken {
    package func cancelSubscription() -> Bool { cancel() }
    package var isSubscriptionActive: Bool { isActive }
}
