import Dispatch

/// The seed libraries' spellings (SwiftEvents 1 and 2), so that code written
/// for them compiles after changing the import. Each forwards to the
/// ObserverSwift name it documents.
extension Event {
    /// SwiftEvents' spelling of ``send(_:)``.
    @inlinable
    public func trigger(_ value: Value) {
        send(value)
    }

    /// SwiftEvents 2's spelling of ``send(_:)``.
    @inlinable
    public func notify(_ value: Value) {
        send(value)
    }

    /// SwiftEvents 2's form: `target` only bounds the subscription's life
    /// (held weakly); the handler receives the value alone.
    ///
    /// ```swift
    /// model.didDownload.subscribe(self) { [weak self] image in self?.show(image) }
    /// ```
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, delivery: .synchronous, limit: nil) { _, value in handler(value) }
    }

    /// SwiftEvents' alias of ``subscribe(_:limit:handler:)-(_,_,(Target,Value)->Void)``.
    @discardableResult
    public func addSubscriber<Target: AnyObject & Sendable>(
        _ target: Target, handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribe(target, handler: handler)
    }

    /// SwiftEvents' alias of ``unsubscribe(_:)``.
    @discardableResult
    public func removeSubscriber(_ target: AnyObject) -> Int {
        unsubscribe(target)
    }

    /// SwiftEvents' alias of ``unsubscribeAll()``.
    @discardableResult
    public func removeAllSubscribers() -> Int {
        unsubscribeAll()
    }
}

extension Event where Value: Sendable {
    /// SwiftEvents 2's form with a queue: `target` only bounds the
    /// subscription's life; the handler receives the value alone.
    @discardableResult
    public func subscribe<Target: AnyObject & Sendable>(
        _ target: Target, queue: DispatchQueue?, handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        subscribeTarget(target, delivery: Delivery(queue: queue), limit: nil) { _, value in handler(value) }
    }

    /// SwiftEvents' alias of ``subscribe(_:queue:limit:handler:)``.
    @discardableResult
    public func addSubscriber<Target: AnyObject & Sendable>(
        _ target: Target, queue: DispatchQueue?, handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        subscribe(target, queue: queue, handler: handler)
    }
}
