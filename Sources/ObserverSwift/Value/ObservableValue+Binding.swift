import Dispatch

/// Binding targets (SwiftEvents' names).
extension ObservableValue {
    /// Calls `handler` with the live `target` and the new value after every
    /// set. `target` is held weakly (no `[weak self]` needed); once it is
    /// deallocated the binding stops and its slot is reclaimed.
    ///
    /// ```swift
    /// viewModel.title.bind(self) { me, title in me.titleLabel.text = title }
    /// ```
    ///
    /// - Parameters:
    ///   - target: the object passed to `handler`, held weakly.
    ///   - queue: where the handler runs; `nil` (the default) means the
    ///     setting thread, synchronously.
    ///   - replay: when true, the handler also gets the current value now
    ///     (on its queue, if any), and then every later value, with no gap
    ///     and no repeat even while other threads set the value.
    ///   - handler: receives the live target and the new value.
    /// - Returns: a token that cancels this binding alone (may be ignored).
    @discardableResult
    public func bind<Target: AnyObject>(
        _ target: Target, queue: DispatchQueue? = nil, replay: Bool = false,
        handler: @escaping (Target, Value) -> Void
    ) -> Subscription {
        guard replay else {
            return changes.subscribe(target, queue: queue, handler: handler)
        }
        let delivery = Delivery(queue: queue)
        return withTurn { current in
            let subscription = changes.subscribe(target, queue: queue, handler: handler)
            let isSubscribed = { subscription.isActive }
            delivery.run(ifSubscribed: isSubscribed) { [weak target] in
                if let target { handler(target, current) }
            }
            return subscription
        }
    }

    /// ``bind(_:queue:replay:handler:)`` with a main-actor handler: it runs
    /// synchronously when the value is set on the main thread, and is
    /// enqueued on the main queue otherwise.
    @discardableResult
    public func bindOnMainActor<Target: AnyObject>(
        _ target: Target, replay: Bool = false,
        handler: @escaping @MainActor (Target, Value) -> Void
    ) -> Subscription where Value: Sendable {
        guard replay else {
            return changes.subscribeOnMainActor(target, handler: handler)
        }
        return withTurn { current in
            let subscription = changes.subscribeOnMainActor(target, handler: handler)
            let isSubscribed = { subscription.isActive }
            Delivery.mainActor.run(ifSubscribed: isSubscribed) { [weak target] in
                guard let target else { return }
                let unchecked = UncheckedSendable(target)
                MainActor.assumeIsolated { handler(unchecked.wrapped, current) }
            }
            return subscription
        }
    }

    /// Removes every binding of `target`; returns how many. A target never
    /// bound is a no-op (returns 0).
    @discardableResult
    public func unbind(_ target: AnyObject) -> Int {
        changes.unsubscribe(target)
    }

    /// Removes every binding made with `bind`; observers added with
    /// ``addObserver(queue:replay:_:)`` stay (see ``removeObserver()``, and
    /// ``removeAllObservers()`` for both). Returns how many were removed.
    @discardableResult
    public func unbindAll() -> Int {
        changes.slots.removeAll { $0.hasTarget }
    }
}

/// Closure observers (the minimal `Observable<T>(value:)` recipe).
extension ObservableValue {
    /// Calls `handler` with the new value after every set; the token removes
    /// it (``removeObserver(_:)`` or `token.cancel()`).
    ///
    /// ```swift
    /// let count = ObservableValue(value: 0)
    /// let token = count.addObserver { print("count is", $0) }
    /// count.value += 1            // prints "count is 1"
    /// count.removeObserver(token)
    /// ```
    ///
    /// - Parameters:
    ///   - queue: where the handler runs; `nil` means the setting thread.
    ///   - replay: when true, the handler also gets the current value now.
    ///   - handler: receives each new value.
    /// - Returns: a token that removes this observer.
    @discardableResult
    public func addObserver(
        queue: DispatchQueue? = nil, replay: Bool = false, _ handler: @escaping (Value) -> Void
    ) -> Subscription {
        guard replay else {
            return changes.subscribe(queue: queue, handler)
        }
        let delivery = Delivery(queue: queue)
        return withTurn { current in
            let subscription = changes.subscribe(queue: queue, handler)
            let isSubscribed = { subscription.isActive }
            delivery.run(ifSubscribed: isSubscribed) { handler(current) }
            return subscription
        }
    }

    /// ``addObserver(queue:replay:_:)`` with a main-actor handler.
    @discardableResult
    public func addObserverOnMainActor(
        replay: Bool = false, _ handler: @escaping @MainActor (Value) -> Void
    ) -> Subscription where Value: Sendable {
        guard replay else {
            return changes.subscribeOnMainActor(handler)
        }
        return withTurn { current in
            let subscription = changes.subscribeOnMainActor(handler)
            let isSubscribed = { subscription.isActive }
            Delivery.mainActor.run(ifSubscribed: isSubscribed) {
                MainActor.assumeIsolated { handler(current) }
            }
            return subscription
        }
    }

    /// Removes the observer `token` names. Returns false (and does nothing)
    /// for a token already removed or issued by another source.
    @discardableResult
    public func removeObserver(_ token: Subscription) -> Bool {
        // Handles are unique in the process: a foreign one matches no slot.
        changes.slots.remove(token.handle)
    }

    /// Removes every observer added with ``addObserver(queue:replay:_:)``;
    /// bindings made with `bind` stay. Returns how many were removed.
    @discardableResult
    public func removeObserver() -> Int {
        changes.slots.removeAll { !$0.hasTarget }
    }

    /// Removes every observer, bound or added.
    @discardableResult
    public func removeAllObservers() -> Int {
        changes.unsubscribeAll()
    }

    /// Observers that can still be called: bindings whose target is alive
    /// and added observers not removed.
    public var observersCount: Int { changes.subscribersCount }

    /// How many times the observers were notified (sets skipped as
    /// duplicates are not counted; replays are not counted).
    public var triggersCount: Int { changes.triggersCount }

    /// Sets ``triggersCount`` back to zero.
    public func resetTriggersCount() {
        changes.resetTriggersCount()
    }
}
