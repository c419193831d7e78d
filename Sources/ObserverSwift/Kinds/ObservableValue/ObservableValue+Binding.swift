import Dispatch

/// Binding targets (SwiftEvents' names).
extension ObservableValue {
    /// Calls `handler` on the setting thread with the live `target` and the
    /// new value after every set. `target` is held weakly (no `[weak self]`
    /// needed); once it is deallocated the binding stops and its slot is
    /// reclaimed. Sets may come from several threads, so the handler is
    /// `@Sendable` and the target `Sendable`.
    ///
    /// ```swift
    /// viewModel.title.bind(self) { me, title in me.titleLabel.text = title }
    /// ```
    ///
    /// - Parameters:
    ///   - target: the object passed to `handler`, held weakly.
    ///   - replay: when true, the handler also gets the current value now,
    ///     and then every later value, with no gap and no repeat even while
    ///     other threads set the value.
    ///   - handler: receives the live target and the new value.
    /// - Returns: a token that cancels this binding alone (may be ignored:
    ///   the binding also ends with its target).
    @discardableResult
    public func bind<Target: AnyObject & Sendable>(
        _ target: Target, replay: Bool = false,
        handler: @escaping @Sendable (Target, Value) -> Void
    ) -> Subscription {
        guard replay else {
            return changes.subscribe(target, handler: handler)
        }
        return subscribeReplaying(delivery: .synchronous) {
            changes.subscribe(target, handler: handler)
        } replay: { current in
            handler(target, current)
        }
    }

    /// SwiftEvents 2's form: `target` only bounds the binding's life (held
    /// weakly); the handler receives the value alone.
    ///
    /// ```swift
    /// viewModel.infoLabel.bind(self) { [weak self] in self?.updateInfoLabel($0) }
    /// ```
    @discardableResult
    public func bind<Target: AnyObject & Sendable>(
        _ target: Target, replay: Bool = false, handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        bind(target, replay: replay) { _, value in handler(value) }
    }

    /// Removes every binding of `target`; returns how many. A target never
    /// bound is a no-op (returns 0).
    @discardableResult
    public func unbind(_ target: AnyObject) -> Int {
        changes.unsubscribe(target)
    }

    /// Removes every binding made with `bind`; observers added with
    /// ``addObserver(replay:_:)`` stay (see ``removeObserver()``, and
    /// ``removeAllObservers()`` for both). Returns how many were removed.
    @discardableResult
    public func unbindAll() -> Int {
        changes.slots.removeAll { $0.hasTarget }
    }
}

/// Closure observers (the minimal `Observable<T>(value:)` recipe).
extension ObservableValue {
    /// Calls `handler` on the setting thread with the new value after every
    /// set; the token removes it (``removeObserver(_:)`` or `token.cancel()`).
    ///
    /// ```swift
    /// let count = ObservableValue(value: 0)
    /// let token = count.addObserver { print("count is", $0) }
    /// count.value += 1            // prints "count is 1"
    /// count.removeObserver(token)
    /// ```
    ///
    /// - Parameters:
    ///   - replay: when true, the handler also gets the current value now.
    ///   - handler: receives each new value.
    /// - Returns: a token that removes this observer. Nothing else ends it, so
    ///   the result may not be ignored.
    public func addObserver(
        replay: Bool = false, _ handler: @escaping @Sendable (Value) -> Void
    ) -> Subscription {
        guard replay else {
            return changes.subscribe(handler)
        }
        return subscribeReplaying(delivery: .synchronous) {
            changes.subscribe(handler)
        } replay: {
            handler($0)
        }
    }

    /// Subscribes with `subscribe` and hands the current value to `replay`
    /// where `delivery` says, holding the turn so that no set comes between
    /// the two. A queued replay is dropped if the subscription is cancelled
    /// before it runs.
    func subscribeReplaying(
        delivery: Delivery, _ subscribe: () -> Subscription, replay: @escaping (Value) -> Void
    ) -> Subscription {
        withTurn { current in
            let subscription = subscribe()
            delivery.run(ifSubscribed: { subscription.isActive }) { replay(current) }
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

    /// Removes every observer added with ``addObserver(replay:_:)``;
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
