import ObserverEngine

/// An observation of one ``ObservableProperty``, returned by
/// `observe(\.$property) { old, new in }`: activatable and deactivatable like
/// ``NotificationObserver``, and ended when released.
///
/// <!-- snippet: fragment of ProfileOwner -->
/// ```swift
/// let observer = profile.observe(\.$name) { old, new in print(old, "→", new) }
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
    // @unchecked: `list`, `box` and `addBox` are immutable; the handle is
    // behind a mutex.

    private let list: AnySlotList
    private let box: AttachableSubscriber
    /// Stores `box` in `list` (the typed list's add) and returns its handle.
    private let addBox: @Sendable () -> SlotHandle
    private let handle = Locked<SlotHandle>(SlotHandle.notAdded)

    init<Box: AttachableSubscriber>(list: SlotList<Box>, box: Box) {
        self.list = list
        self.box = box
        self.addBox = { list.add(box) }
    }

    deinit {
        deactivate()
    }

    /// Whether the observer is stored in its property's observer list (false
    /// once the owner of its group has been deallocated).
    public var isActive: Bool {
        handle.withLock { !$0.isNotAdded && list.contains($0) }
    }

    /// Starts observing; a no-op when active. Any thread.
    @discardableResult
    public func activate() -> Self {
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
        handle.withLock { handle in
            box.attached.store(false, ordering: .releasing)
            if !handle.isNotAdded {
                list.remove(handle)
                handle = SlotHandle.notAdded
            }
        }
        return self
    }

    /// Says whether the observer is active (for logs).
    public var description: String {
        "KeyPathObserver" + (isActive ? " (active)" : " (inactive)")
    }
}

extension KeyPathObserver: OwnerGated {
    var ownerGate: OwnerGate { box.gate }
}
