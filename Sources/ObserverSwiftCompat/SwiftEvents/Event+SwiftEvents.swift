import Dispatch
import ObserverSwift

/// SwiftEvents' spellings (versions 1 and 2). Each forwards to the
/// ObserverSwift call it names.
extension Event {
    /// SwiftEvents 1's spelling of `send(_:)`.
    @inlinable
    public func trigger(_ value: Value) {
        send(value)
    }

    /// SwiftEvents 2's spelling of `send(_:)`.
    @inlinable
    public func notify(_ value: Value) {
        send(value)
    }

    /// SwiftEvents 2's form: `target` only bounds the subscription's life
    /// (held weakly); the handler receives the value alone.
    ///
    /// <!-- snippet: fragment of DownloadScreen -->
    /// ```swift
    /// model.didDownload.subscribe(self) { [weak self] image in self?.show(image) }
    /// ```
    @inlinable
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribe(target) { _, value in handler(value) }
    }

    /// SwiftEvents 1's spelling of `subscribe(_:handler:)` with a handler
    /// that receives the live target.
    @inlinable
    @discardableResult
    public func addSubscriber<Target: AnyObject & Sendable>(
        _ target: Target, handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribe(target, handler: handler)
    }

    /// SwiftEvents 1's spelling of `unsubscribe(_:)`.
    @discardableResult
    public func removeSubscriber(_ target: AnyObject) -> Int {
        unsubscribe(target)
    }

    /// SwiftEvents 1's spelling of `unsubscribeAll()`.
    @discardableResult
    public func removeAllSubscribers() -> Int {
        unsubscribeAll()
    }
}

extension Event where Value: Sendable {
    /// SwiftEvents 2's form with a queue: `target` only bounds the
    /// subscription's life; the handler receives the value alone, on `queue`
    /// (`nil`: on the sending thread).
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, queue: DispatchQueue?, handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribe(target, delivery: Delivery(queue: queue)) { _, value in handler(value) }
    }

    /// SwiftEvents' form with a queue and a handler that receives the live
    /// target (`nil`: the sending thread).
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, queue: DispatchQueue?, handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribe(target, delivery: Delivery(queue: queue), handler: handler)
    }

    /// SwiftEvents 1's spelling of `subscribe(_:queue:handler:)` with a
    /// handler that receives the live target.
    @discardableResult
    public func addSubscriber<Target: AnyObject & Sendable>(
        _ target: Target, queue: DispatchQueue?, handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribe(target, queue: queue, handler: handler)
    }
}

extension Delivery {
    /// `.queue(queue)` when a queue is given, `.synchronous` otherwise: the
    /// meaning of SwiftEvents' `queue: DispatchQueue? = nil`.
    @inlinable
    public init(queue: DispatchQueue?) {
        self = queue.map(Delivery.queue) ?? .synchronous
    }
}
