import Dispatch
import ObserverSwift

/// SwiftEvents' `Observable` spellings (`bind`, `unbind`, `unbindAll`,
/// `observersCount`, `<<<`) over ``ObservableValue``'s `subscribe` family.
extension ObservableValue {
    /// SwiftEvents' `bind`: `subscribe(_:handler:)`, on ``replaying`` when
    /// `replay` is true.
    @discardableResult
    public func bind<Target: AnyObject & Sendable>(
        _ target: Target, replay: Bool = false,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        replay ? replaying.subscribe(target, handler: handler) : subscribe(target, handler: handler)
    }

    /// SwiftEvents 2's form: `target` only bounds the binding's life (held
    /// weakly); the handler receives the value alone.
    ///
    /// <!-- snippet: fragment of InfoLabelScreen -->
    /// ```swift
    /// viewModel.infoLabel.bind(self) { [weak self] in self?.updateInfoLabel($0) }
    /// ```
    @discardableResult
    public func bind<Target: AnyObject & Sendable>(
        _ target: Target, replay: Bool = false, handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        bind(target, replay: replay) { _, value in handler(value) }
    }

    /// SwiftEvents' spelling of `unsubscribe(_:)`.
    @discardableResult
    public func unbind(_ target: AnyObject) -> Int {
        unsubscribe(target)
    }

    /// Removes every binding made with a target; closure observers stay.
    /// Returns how many were removed.
    @discardableResult
    public func unbindAll() -> Int {
        unsubscribeAll(withTargets: true)
    }

    /// SwiftEvents' spelling of `subscribersCount`.
    public var observersCount: Int { subscribersCount }
}

extension ObservableValue where Value: Sendable {
    /// SwiftEvents' form with a queue (`nil`: the setting thread).
    @discardableResult
    public func bind<Target: AnyObject & Sendable>(
        _ target: Target, queue: DispatchQueue?, replay: Bool = false,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        let delivery = Delivery(queue: queue)
        return replay
            ? replaying.subscribe(target, delivery: delivery, handler: handler)
            : subscribe(target, delivery: delivery, handler: handler)
    }

    /// SwiftEvents 2's form with a queue: the handler receives the value alone.
    @discardableResult
    public func bind<Target: AnyObject & Sendable>(
        _ target: Target, queue: DispatchQueue?, replay: Bool = false,
        handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        bind(target, queue: queue, replay: replay) { _, value in handler(value) }
    }
}

/// Sets a new value: `observable <<< value` (SwiftEvents' operator).
/// Assignment precedence, so `count <<< count.value + 1` needs no parentheses.
infix operator <<< : AssignmentPrecedence

/// Sets `observable.value` to `value`, notifying its subscribers.
///
/// ```swift
/// let score = ObservableValue(0)
/// score <<< 5          // score.value == 5
/// ```
@inlinable
public func <<< <Value>(observable: ObservableValue<Value>, value: @autoclosure () -> Value) {
    observable.value = value()
}
