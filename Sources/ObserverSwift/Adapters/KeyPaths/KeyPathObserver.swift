/// An observation of one ``ObservableProperty``, returned by
/// `observe(\.property) { old, new in }`: activatable and deactivatable like
/// ``NotificationObserver``, and ended when released.
///
/// ```swift
/// let observer = profile.observe(\.name) { old, new in print(old, "→", new) }
/// observer.deactivate()           // paused
/// observer.activate()             // observing again
/// observer.add(to: self)          // kept (and gated) by a HasObservers owner
/// ```
///
/// Guarantees: ``activate()`` / ``deactivate()`` are idempotent and may be
/// called from any thread, also from inside the handler. After
/// ``deactivate()`` returns (or the observer is released), no write that
/// starts later calls the handler, and no queued call runs it. The observer
/// does not keep the observed object alive.
public final class KeyPathObserver: Observes, CustomStringConvertible, @unchecked Sendable {
    // @unchecked: `list`, `box` and `keyPath` are immutable; the handle is
    // behind a mutex.

    private let list: AnySlotList?
    private let box: AttachableSubscriber?
    /// Stores `box` in `list` (the typed list's add) and returns its handle.
    private let addBox: (@Sendable () -> SlotHandle)?
    /// The observed key path, when observed through one.
    public let keyPath: AnyKeyPath?
    private let handle = Locked<SlotHandle>(SlotHandle.notAdded)

    init<Box: AttachableSubscriber>(list: SlotList<Box>, box: Box, keyPath: AnyKeyPath?) {
        self.list = list
        self.box = box
        self.addBox = { list.add(box) }
        self.keyPath = keyPath
    }

    private init(unresolved keyPath: AnyKeyPath) {
        self.list = nil
        self.box = nil
        self.addBox = nil
        self.keyPath = keyPath
    }

    /// An observer of nothing, for a key path that is not an observable property.
    static func unresolved(_ keyPath: AnyKeyPath) -> KeyPathObserver {
        KeyPathObserver(unresolved: keyPath)
    }

    deinit {
        deactivate()
    }

    /// False when the key path given to `observe` was not an
    /// ``ObservableProperty`` of the object: then this observer observes
    /// nothing and ``activate()`` is a no-op.
    public var isResolved: Bool { list != nil }

    /// Whether the observer is stored in its property's observer list (false
    /// once the owner of its group has been deallocated).
    public var isActive: Bool {
        guard let list else { return false }
        return handle.withLock { !$0.isNotAdded && list.contains($0) }
    }

    /// Starts observing; a no-op when active. Any thread.
    @discardableResult
    public func activate() -> Self {
        guard let list, let box, let addBox else { return self }
        handle.withLock { handle in
            if !handle.isNotAdded && list.contains(handle) { return }
            if box.isExpired || box.gate.ownerIsGone { return }  // its group's owner is gone
            box.attached.store(true, ordering: .releasing)
            handle = addBox()
        }
        return self
    }

    /// Stops observing; a no-op when inactive. Any thread.
    @discardableResult
    public func deactivate() -> Self {
        guard let list, let box else { return self }
        handle.withLock { handle in
            box.attached.store(false, ordering: .releasing)
            if !handle.isNotAdded {
                list.remove(handle)
                handle = SlotHandle.notAdded
            }
        }
        return self
    }

    /// Names the observed key path and says whether the observer is
    /// resolved and active (for logs).
    public var description: String {
        let path = keyPath.map { String(describing: $0) } ?? "projected property"
        if !isResolved { return "KeyPathObserver: \(path) (not an observable property)" }
        return "KeyPathObserver: \(path)" + (isActive ? " (active)" : " (inactive)")
    }
}

extension KeyPathObserver: OwnerGated {
    var ownerGate: OwnerGate { box?.gate ?? OwnerGate() }
}
