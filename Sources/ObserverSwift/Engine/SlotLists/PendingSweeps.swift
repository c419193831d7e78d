/// Something holding removals a send could not do without blocking (a
/// writer lock was busy), to be done by a later writer call.
protocol PendingRemovalsHolder: AnyObject, Sendable {
    /// Does the held removals, blocking for the writer lock if needed.
    func performPendingRemovals()
}

/// The process-wide set of holders with removals pending, so that
/// `ObserverCore.reclaimNow()` releases what a send left behind even when
/// no later call on that list would. Held weakly: a holder that goes away
/// takes its removals with it (its owner removes everything).
enum PendingSweeps {
    private struct Entry {
        weak var holder: (any PendingRemovalsHolder)?
    }

    private static let holders = Locked<[ObjectIdentifier: Entry]>([:])

    /// Records that `holder` has removals pending. Only on the rare path
    /// where a send met a busy writer lock.
    static func register(_ holder: some PendingRemovalsHolder) {
        holders.withLock { $0[ObjectIdentifier(holder)] = Entry(holder: holder) }
    }

    /// Does every holder's pending removals (outside the set's lock: they
    /// release boxes, whose deinits may run user code).
    static func performAll() {
        let taken = holders.withLock { entries -> [any PendingRemovalsHolder] in
            defer { entries.removeAll() }
            return entries.values.compactMap(\.holder)
        }
        for holder in taken { holder.performPendingRemovals() }
    }
}
