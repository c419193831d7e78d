import Dispatch
import ObserverEngine

/// The side table behind ``HasObservers``: one group per owner object, with
/// no stored property in the owner (Linux has no associated objects).
///
/// Each entry holds its owner weakly. Linux gives no hook into an arbitrary
/// object's deallocation, so the entry of a deallocated owner is removed
/// later, by whichever comes first:
/// - any access to the table (`add(observer:)`, `activateObservers()`, ...,
///   ``count``, ``sweep()``): small tables (fewer than 16 groups) are swept on
///   every access; larger ones once per `count / 8` accesses, so that an
///   access stays O(1) amortized;
/// - a periodic sweep on a utility queue, every 5 seconds
///   while the table is not empty.
///
/// Removing an entry deactivates its observers at once (they leave their
/// notification center or property) and releases them after a grace period.
/// Independently of the sweep, each of the library's observers checks its
/// owner before every delivery: after the owner is deallocated, no handler
/// is called on its behalf and the observer deregisters itself.
///
/// Engine diagnostics, for the library's own tests: `@_spi(EngineDiagnostics)`.
@_spi(EngineDiagnostics)
public enum ObserverOwners {
    /// Seconds between periodic sweeps while groups exist.
    static let sweepInterval: Double = 5

    /// Groups of live owners. Reading it sweeps first.
    public static var count: Int {
        ObserverOwnerTable.shared.withTable(sweepAll: true) { $0.count }
    }

    /// Removes the groups of deallocated owners now (deactivating their
    /// observers); returns how many were removed.
    @discardableResult
    public static func sweep() -> Int {
        ObserverOwnerTable.shared.sweep()
    }
}

/// The table itself: `ObjectIdentifier(owner)` → entry. It maps owners to
/// groups; no send iterates it (each group is a slot list in the core).
final class ObserverOwnerTable: Sendable {
    static let shared = ObserverOwnerTable()

    struct Entry: @unchecked Sendable {
        // @unchecked: the group is thread-safe; the entry lives under the mutex.
        let group: OwnerObservers
    }

    private struct State: @unchecked Sendable {
        // @unchecked: only touched under `state`'s lock.
        var groups: [ObjectIdentifier: Entry] = [:]
        var accessesSinceSweep = 0
        var sweepScheduled = false
    }

    private let state = Locked<State>(State())

    /// Runs `body` on the table under its lock, after sweeping when due.
    /// Groups removed by the sweep are deactivated after the lock is left.
    func withTable<Result>(
        sweepAll: Bool = false, _ body: (inout [ObjectIdentifier: Entry]) -> Result
    ) -> Result {
        var removed: [OwnerObservers] = []
        var scheduleSweep = false
        let result = state.withLock { state -> Result in
            state.accessesSinceSweep += 1
            if sweepAll || state.accessesSinceSweep >= max(1, state.groups.count / 8) {
                removed = Self.removeDead(&state)
            }
            let result = body(&state.groups)
            if !state.groups.isEmpty && !state.sweepScheduled {
                state.sweepScheduled = true
                scheduleSweep = true
            }
            return result
        }
        // Deactivating runs observers' code: never under the table's lock.
        for group in removed { group.deactivateAll() }
        if scheduleSweep { schedulePeriodicSweep() }
        return result
    }

    /// The group of `owner`, created when `create` is true.
    func group(for owner: AnyObject, create: Bool) -> OwnerObservers? {
        let key = ObjectIdentifier(owner)
        var stale: OwnerObservers?
        let group = withTable { groups -> OwnerObservers? in
            if let entry = groups[key] {
                // The same address may belong to a new object once the old
                // owner is gone: the entry must be for this very object.
                if entry.group.owner === owner { return entry.group }
                stale = entry.group
                groups[key] = nil
            }
            guard create else { return nil }
            let group = OwnerObservers(owner: owner)
            groups[key] = Entry(group: group)
            return group
        }
        stale?.deactivateAll()
        return group
    }

    /// Whether an entry exists for this identifier now (tests).
    func hasEntry(for key: ObjectIdentifier) -> Bool {
        state.withLock { $0.groups[key] != nil }
    }

    func sweep() -> Int {
        let removed = state.withLock { Self.removeDead(&$0) }
        for group in removed { group.deactivateAll() }
        return removed.count
    }

    private static func removeDead(_ state: inout State) -> [OwnerObservers] {
        state.accessesSinceSweep = 0
        var removed: [OwnerObservers] = []
        for (key, entry) in state.groups where entry.group.owner == nil {
            removed.append(entry.group)
            state.groups[key] = nil
        }
        return removed
    }

    private func schedulePeriodicSweep() {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + ObserverOwners.sweepInterval) {
            let removed = self.state.withLock { state -> [OwnerObservers] in
                let removed = Self.removeDead(&state)
                state.sweepScheduled = !state.groups.isEmpty
                return removed
            }
            for group in removed { group.deactivateAll() }
            if self.state.withLock({ $0.sweepScheduled }) { self.schedulePeriodicSweep() }
        }
    }
}
