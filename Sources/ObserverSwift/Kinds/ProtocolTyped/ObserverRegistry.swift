import Dispatch
import Foundation
import ObserverEngine

/// Observers of any protocols, held weakly, called by the protocol they
/// conform to (Flowduino's `Observable` API): an observable type holds one
/// as a stored property.
///
/// ```swift
/// protocol TemperatureObserver: AnyObject {
///     func temperatureChanged(to celsius: Double)
/// }
/// final class Display: TemperatureObserver, Sendable {
///     func temperatureChanged(to celsius: Double) { print("now \(celsius) °C") }
/// }
/// let registry = ObserverRegistry()
/// let display = Display()
/// registry.addObserver(display)
/// registry.withObservers { (observer: TemperatureObserver) in
///     observer.temperatureChanged(to: 21.5)
/// }
/// ```
///
/// **Which observers are called.** `withObservers` calls exactly the
/// registered observers that conform to the type of its closure's
/// parameter (a protocol, a protocol composition, a class, `AnyObject`),
/// each where the ``Delivery`` it was added with says. Whether an observer
/// conforms is decided once per observer and protocol (when the protocol is
/// first used, or when the observer is added afterwards), by asking the
/// Swift runtime, which answers the same on every thread (a plain cast of a
/// conformance isolated to the main actor fails off the main actor), never
/// by a cast per call: each protocol used gets its own list of conforming
/// observers on the C core. A registry with one synchronous observer
/// called through one protocol keeps it without lists: with its observer
/// it takes 224 bytes once notified (mallinfo2, `make bench`'s
/// `memory-per-source`). A conformance isolated to the main actor is
/// called on the main actor; one isolated to another global actor on that
/// actor's shared instance, in order (whatever the observer's delivery).
/// An observer whose conformances to the protocols of a composition are
/// isolated to two different global actors is not called for that
/// composition: no one actor can make the call.
///
/// **Weak references.** Observers are not retained. One that is deallocated
/// is never called again and is dropped from every list; there is no need to
/// remove observers in `deinit`. Adding the same observer twice is a no-op
/// (the token returned is inactive).
///
/// **Threads.** Every method may be called from any thread. `withObservers`
/// takes no lock and never waits, except the first call after observers
/// were added, which stores them in the protocol lists (see
/// ``withObservers(_:)``); `addObserver` and `removeObserver` never wait for
/// a `withObservers` in progress (Flowduino's "revolving door"). An
/// observer added during a `withObservers` is not called by it; one removed
/// during it may still be called by it, and is not called by any
/// `withObservers` that starts afterwards. An observer is called on the
/// thread that calls `withObservers` unless it was added with another
/// ``Delivery`` (a queue), or its conformance is isolated to an actor.
///
/// **Reentrancy.** An observer called by `withObservers` may add or remove
/// observers (itself included) and may call `withObservers` again.
public final class ObserverRegistry: @unchecked Sendable {
    // @unchecked: the writer state is guarded by its own lock and published
    // by one atomic word; the lists are the internally synchronized C core;
    // `views` is atomic and the nodes it reaches are immutable.

    /// First stored property: the words of `views`, `hasPendingAdds`,
    /// `storesAddsAtOnce` and the writer state (see ``RegistryWords``).
    @usableFromInline
    var words = RegistryWords<ProtocolViewNode>()

    typealias Words = RegistryWords<ProtocolViewNode>

    /// The lock-free list of protocol views, newest first; or the
    /// registry's one stored observer (``SoleStoredObserver``), which it
    /// calls without views (see ``RegistryViewsWord``).
    @usableFromInline
    var views: RegistryViewsWord<ProtocolViewNode> { RegistryWords.views(of: self) }
    /// True while observers added are waiting to be stored in the lists. Set
    /// under the writer lock; a send that reads false (acquiring, pairing
    /// with the releasing stores) sees every observer whose `addObserver`
    /// returned before in the lists.
    @usableFromInline
    var hasPendingAdds: AtomicWord<Bool> { RegistryWords<ProtocolViewNode>.hasPendingAdds(of: self) }

    /// The writer state (lock, identity table, pending adds, views), made
    /// by the first writer that has something to record: a registry no
    /// observer was added to is this object alone. Published by one
    /// acquiring-and-releasing exchange (`LazyObjectWord`): a thread that
    /// loads it (acquiring) sees it initialized; two first writers racing
    /// make one each and the loser uses the winner's. It lives as long as
    /// the registry: once loaded, it can be used without retaining it.
    private var writerStateWord: LazyObjectWord<RegistryWriterState> {
        Words.writerState(of: self, as: RegistryWriterState.self)
    }

    /// The writer state, made now if no writer made it yet.
    private var writerState: RegistryWriterState {
        writerStateWord.made { RegistryWriterState(deadFlag: nil) }.takeUnretainedValue()
    }

    /// The writer state, or nil when nothing was ever recorded.
    private var existingWriterState: RegistryWriterState? { writerStateWord.existing?.takeUnretainedValue() }

    /// Whether adds wait for the next `withObservers` to be stored: true for
    /// a registry of its own; false for a keyed registry's per-key one,
    /// whose sends reach it inside a read section (its adds are stored at
    /// once). Set by `init`, before the registry is shared.
    private var defersAdds: Bool {
        !Words.storesAddsAtOnce(of: self).load(ordering: .relaxed)
    }

    /// Observers stored in the lists, dead ones not yet swept included (for
    /// tests).
    var storedCount: Int {
        guard let made = writerStateWord.existing else { return 0 }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        var stored = soleStoredLocked() == nil ? 0 : 1
        for case .stored in state.table?.storedValues ?? [] { stored += 1 }
        return stored
    }

    /// The identity table's entry of `observer`, if the registry has a
    /// table (for tests).
    func entry(for observer: AnyObject) -> RegistryEntry? {
        guard let made = writerStateWord.existing else { return nil }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        return state.table?.value(forKey: ObjectIdentifier(observer), in: state)
    }

    #if DEBUG
        /// Consistency check (debug builds): the identity table is
        /// consistent, every pending entry names the pending observer of its
        /// identity, every pending observer has its entry, no removed record
        /// is in the table, and every box the table holds is in its list.
        func checkConsistency() {
            guard let made = writerStateWord.existing else { return }
            let state = made.takeUnretainedValue()
            state.lock()
            defer { state.unlock() }
            guard let table = state.table else {
                precondition(state.pending.isEmpty, "ObserverRegistry: pending observers without a table")
                return
            }
            table.checkConsistency(in: state)
            var pendingEntries = 0
            for case .pending(let index) in table.storedValues {
                pendingEntries += 1
                precondition(Int(index) < state.pending.count, "ObserverRegistry: a pending entry past the end")
            }
            precondition(pendingEntries == state.pending.count, "ObserverRegistry: pending observers without entries")
            for case .stored(let stored) in table.storedValues {
                if let record = stored.record {
                    precondition(!record.isRemoved, "ObserverRegistry: a removed record in the table")
                } else {
                    precondition(stored.soleBox.handle != nil, "ObserverRegistry: a box in the table but in no list")
                }
            }
            for (index, observer) in state.pending.enumerated() {
                guard case .pending(let entryIndex) = table.value(forKey: observer.identifier, in: state) else {
                    preconditionFailure("ObserverRegistry: a pending observer without its entry")
                }
                precondition(Int(entryIndex) == index, "ObserverRegistry: a pending entry names another index")
            }
        }
    #endif

    /// Creates an empty registry. It allocates nothing more until its first
    /// observer is added.
    public init() {}

    /// A registry whose sends also report dead observers to `parent` (a
    /// ``KeyedObserverRegistry`` holding one registry per key).
    init(reportingDeathsTo parent: DeadObserverFlag) {
        words.storesAddsAtOnce = AtomicWordStorage(true)
        // Made at once: a per-key registry is made for its first observer.
        _ = writerStateWord.made { RegistryWriterState(deadFlag: DeadObserverFlag(parent: parent)) }
    }

    deinit {
        // No send runs any more: the sole stored observer is released at once.
        views.releaseSoleStored()
        writerStateWord.release()
    }

    // MARK: Adding and removing

    /// Registers `observer`, held weakly, and returns the token of this
    /// registration: cancelling it (or `cancelAndWait()`, or a
    /// ``SubscriptionBag`` holding it) unregisters the observer, as
    /// ``removeObserver(_:)`` does. Dropping the token does not: the observer
    /// stays registered until it is removed or deallocated. When `observer`
    /// is registered already, nothing changes (its delivery neither) and the
    /// token returned is inactive (`isActive` is false).
    ///
    /// Adding only records the observer; the next `withObservers` (on any
    /// thread) stores it in the protocol lists, so every `withObservers`
    /// that starts after this returns calls it.
    ///
    /// - Parameters:
    ///   - observer: the object to register; the registry does not retain it.
    ///   - delivery: where this observer's calls run: on the thread
    ///     calling `withObservers` (the default), on a queue, or on the main
    ///     actor. Every `withObservers` honours it. Queued calls check again,
    ///     where they run, that the observer is still alive and registered.
    ///   - fileID: the file of the call, for ``ObserverCore/liveSubscriptions``
    ///     when tracking is on (leave the default).
    ///   - line: the line of the call (leave the default).
    @discardableResult
    public func addObserver(
        _ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous, fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> Subscription {
        guard let generation = insert(observer, delivery: delivery) else { return Subscription.inactive }
        let subscription = Subscription(
            registration: ObserverRegistration(
                registry: UnownedObserver(self), identifier: ObjectIdentifier(observer), generation: generation))
        return TrackedSubscription.trackingRegistryObserver(
            subscription, of: Self.self, delivery: delivery, fileID: fileID, line: line,
            detail: "observer \(type(of: observer))")
    }

    /// ``addObserver(_:delivery:fileID:line:)`` without a token: whether `observer` was
    /// new (ObserverSwiftCompat's Flowduino spellings return this).
    @discardableResult
    package func insertObserver(_ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous) -> Bool {
        insert(observer, delivery: delivery) != nil
    }

    /// Registers `observer`; its registration's generation, or nil when it
    /// is registered already. A keyed registry passes `generation` (its own
    /// counter's: a key's registry is made again after the key is freed, so
    /// its own counter would start over and an old token could match).
    @inline(__always)
    func insert(_ observer: AnyObject, delivery: Delivery, generation given: UInt64? = nil) -> UInt64? {
        // Borrowed: the registry keeps its writer state (no retain per call).
        writerStateWord.made { RegistryWriterState(deadFlag: nil) }._withUnsafeGuaranteedRef {
            insert(observer, delivery: delivery, generation: given, in: $0)
        }
    }

    @inline(__always)
    private func insert(
        _ observer: AnyObject, delivery: Delivery, generation given: UInt64?, in state: RegistryWriterState
    ) -> UInt64? {
        state.lock()
        defer { state.unlock() }
        sweepDeadObserversLocked(state, force: false)
        if state.table == nil, defersAdds, let stored = soleStoredLocked() {
            if stored.observer.refers(to: observer) { return nil }
            // A second observer: the registry moves to its table (and lists).
            moveSoleStoredToTableLocked(state)
        }
        let generation = given ?? state.nextGeneration
        if defersAdds {
            if state.table == nil {
                if let sole = state.sole {
                    if sole.refers(to: observer) { return nil }
                } else if case .synchronous = delivery.route, given == nil {
                    // The first registration (or the first since all were
                    // removed), synchronous: held inline, nothing allocated.
                    state.nextGeneration &+= 1
                    state.sole = UnownedObserver(observer)
                    hasPendingAdds.store(true, ordering: .releasing)
                    return generation
                }
            }
            // A pending index is 32 bits (an entry is one word): at that many
            // pending adds (over 128 GiB of them) they are stored first.
            if state.pending.count >= RegistryEntry.maximumPendingCount {
                storePendingLocked(state, keepingSoleStored: false)
            }
            sweepBeforeGrowthLocked(state)
            let entries = entriesLocked(state)
            // Appended first: the table reads a pending entry's identity
            // from `pending`. One hash for the common case; a repeated add
            // puts the entry back and drops the appended one.
            state.pending.append(PendingObserver(observer, delivery: delivery, generation: generation))
            if let existing = entries.updateValue(.pending(at: state.pending.count - 1), in: state) {
                entries.updateValue(existing, in: state)
                state.pending.removeLast()
                return nil
            }
            state.nextGeneration &+= 1
            hasPendingAdds.store(true, ordering: .releasing)
            return generation
        }
        sweepBeforeGrowthLocked(state)
        let entries = entriesLocked(state)
        if entries.value(forKey: ObjectIdentifier(observer), in: state) != nil { return nil }
        state.nextGeneration &+= 1
        let record = RegisteredObserver(observer, delivery: delivery, generation: generation)
        entries.updateValue(.stored(StoredRegistration(record)), in: state)
        storeLocked(record, in: state)
        return generation
    }

    /// Unregisters the registration of `generation` of the observer
    /// `identifier`, if it is still registered: a token's `cancel()`.
    func cancelRegistration(of identifier: ObjectIdentifier, generation: UInt64) -> Bool {
        guard let made = writerStateWord.existing else { return false }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        sweepDeadObserversLocked(state, force: false)
        if state.table == nil, let stored = soleStoredLocked() {
            guard stored.isRegistration(of: identifier, generation: generation) else { return false }
            // Probing may release the last reference and run a deinit that
            // changes the registry: the registration is taken out after.
            let wasAlive = stored.observer.isAlive
            if soleStoredLocked() === stored { unpublishSoleStoredLocked() }
            return wasAlive
        }
        guard let entries = state.table else {
            guard let sole = state.sole, state.isSole(identifier, generation) else { return false }
            // Probing may release the last reference and run a deinit that
            // changes the registry: the registration is taken out after.
            let wasAlive = sole.isAlive
            if state.isSole(identifier, generation) {
                state.sole = nil
                hasPendingAdds.store(false, ordering: .releasing)
            }
            return wasAlive
        }
        guard let entry = entries.value(forKey: identifier, in: state),
            entry.generation(in: state.pending) == generation
        else {
            return false
        }
        // A deallocated observer's registration had ended already (as an
        // expired subscription's): it is dropped, and this cancel removed
        // nothing.
        let wasAlive = entry.isAlive(in: state.pending)
        entries.removeValue(forKey: identifier, in: state)
        removeLocked(entry, in: state)
        return wasAlive
    }

    /// Whether that registration is still registered and its observer alive.
    func isRegistrationActive(of identifier: ObjectIdentifier, generation: UInt64) -> Bool {
        guard let made = writerStateWord.existing else { return false }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        if state.table == nil, let stored = soleStoredLocked() {
            return stored.isRegistration(of: identifier, generation: generation) && stored.observer.isAlive
        }
        guard let entries = state.table else {
            guard let sole = state.sole, state.isSole(identifier, generation) else { return false }
            return sole.isAlive
        }
        guard let entry = entries.value(forKey: identifier, in: state),
            entry.generation(in: state.pending) == generation
        else {
            return false
        }
        return entry.isAlive(in: state.pending)
    }

    /// Unregisters `observer`. Returns false (a no-op) when it was not
    /// registered. A `withObservers` that starts after this returns does not
    /// call it; one already running on another thread may.
    @discardableResult
    public func removeObserver(_ observer: AnyObject) -> Bool {
        // Borrowed: the registry keeps its writer state (no retain per call).
        writerStateWord.withExisting { removeObserver(observer, in: $0) } ?? false
    }

    @inline(__always)
    private func removeObserver(_ observer: AnyObject, in state: RegistryWriterState) -> Bool {
        state.lock()
        defer { state.unlock() }
        sweepDeadObserversLocked(state, force: false)
        if state.table == nil, let stored = soleStoredLocked() {
            guard stored.observer.refers(to: observer) else { return false }
            unpublishSoleStoredLocked()
            return true
        }
        guard let entries = state.table else {
            guard let sole = state.sole, sole.refers(to: observer) else { return false }
            state.sole = nil
            hasPendingAdds.store(false, ordering: .releasing)
            return true
        }
        guard let entry = entries.removeValue(forKey: ObjectIdentifier(observer), in: state) else { return false }
        removeLocked(entry, in: state)
        return true
    }

    /// Unregisters every observer; returns how many were registered.
    @discardableResult
    public func removeAllObservers() -> Int {
        guard let made = writerStateWord.existing else { return 0 }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        let hadStored = soleStoredLocked() != nil
        if hadStored { unpublishSoleStoredLocked() }
        let sole = state.sole
        let removed = state.table
        state.sole = nil
        state.table = nil
        state.pending.removeAll()
        hasPendingAdds.store(false, ordering: .releasing)
        for case .stored(let stored) in removed?.storedValues ?? [] { removeLocked(stored) }
        return (removed?.count ?? 0) + (sole == nil ? 0 : 1) + (hadStored ? 1 : 0)
    }

    // MARK: Inspecting

    /// Registered observers that are still alive. Reading it also drops the
    /// deallocated ones.
    public var observerCount: Int {
        guard let made = writerStateWord.existing else { return 0 }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        sweepDeadObserversLocked(state, force: true)
        return entryCountLocked(state)
    }

    /// Whether no observer is registered, dead ones dropped first when a
    /// send has reported one (cheaper than ``observerCount``, which checks
    /// every observer).
    var isEmpty: Bool {
        guard let made = writerStateWord.existing else { return true }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        sweepDeadObserversLocked(state, force: false)
        return entryCountLocked(state) == 0
    }

    /// Entries held, dead observers not yet dropped included (no sweep):
    /// what the registry keeps, for tests.
    var entryCount: Int {
        guard let made = writerStateWord.existing else { return 0 }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        return entryCountLocked(state)
    }

    /// Whether the writer state was made (for tests: a registry no observer
    /// was added to has none).
    var hasWriterState: Bool { existingWriterState != nil }

    /// Whether `observer` is registered.
    public func contains(_ observer: AnyObject) -> Bool {
        guard let made = writerStateWord.existing else { return false }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        if state.table == nil, let stored = soleStoredLocked() { return stored.observer.refers(to: observer) }
        guard let entries = state.table else { return state.sole?.refers(to: observer) ?? false }
        return entries.value(forKey: ObjectIdentifier(observer), in: state) != nil
    }

    // MARK: Calling observers

    /// Calls `body` with every registered observer that conforms to `P`, the
    /// type of the closure's parameter, each where its ``Delivery`` says:
    ///
    /// <!-- snippet: fragment of TemperatureObservers -->
    /// ```swift
    /// registry.withObservers { (observer: TemperatureObserver) in
    ///     observer.temperatureChanged(to: 21.5)
    /// }
    /// ```
    ///
    /// - Synchronous observers (the default) are called on this thread,
    ///   before `withObservers` returns.
    /// - Queue observers are called on their queue, later; observers
    ///   isolated to the main actor on the main actor (at once when this
    ///   call runs there and no main-actor delivery is queued, otherwise
    ///   later). Each is probed
    ///   again where the call runs, so one deallocated or removed meanwhile
    ///   is not called.
    /// - An observer whose conformance to `P` is isolated to the main actor
    ///   (`extension Screen: @MainActor TemperatureObserver`) is called on the
    ///   main actor, whatever its delivery, whichever thread calls this; one
    ///   isolated to another global actor (`extension Job: @Worker
    ///   TemperatureObserver`) on that actor's shared instance, later, in
    ///   the order of the calls (calls made from one thread keep that order
    ///   on the actor, through any protocol and any registry).
    ///
    /// So `body` may run later, on other threads, several at once: it
    /// escapes and is `@Sendable` (capture values, not `self`'s mutable
    /// state).
    ///
    /// Takes no lock and never waits, with two exceptions that take the
    /// registry's writer lock once: the first call for a given `P` builds
    /// that protocol's list (one conformance check per registered observer),
    /// and the first call after `addObserver` stores the observers added
    /// since in every protocol list (one check per new observer and
    /// protocol: `addObserver` itself only records the observer). Otherwise
    /// no casts at all.
    @inlinable
    public func withObservers<P>(_ body: @escaping @Sendable (P) -> Void) {
        if hasPendingAdds.load(ordering: .acquiring) { storePendingAdds() }
        (existingView(for: P.self) ?? viewUnlessSoleStoredCalled(body))?.send(body)
    }

    /// Calls `body` on this thread, before returning, with every observer
    /// conforming to `P` whose delivery allows a call here and now: every
    /// synchronous observer, and main-actor ones (or ones isolated to the
    /// main actor) when this runs on the main actor with no main-actor
    /// delivery queued. Returns how many conforming observers it could not
    /// call: their delivery needs `body` later, elsewhere, which a
    /// non-escaping `body` cannot do. ObserverSwiftCompat's Flowduino
    /// spelling (`withObservers` with a non-escaping closure) is made of
    /// this and reports a non-zero result.
    @inlinable @inline(__always)
    package func withObserversCallableHere<P>(_ body: (P) -> Void) -> Int {
        if hasPendingAdds.load(ordering: .acquiring) { storePendingAdds() }
        // The sole stored observer is synchronous: callable here.
        return (existingView(for: P.self) ?? viewUnlessSoleStoredCalled(body))?.sendHere(body) ?? 0
    }

    /// A send's view of `P` when it found none: nil when the registry's sole
    /// stored observer took the call (or does not conform to `P`), or when
    /// no observer was ever added; otherwise the view, made now. Kept out of
    /// line (specialized all the same), so that a send that finds its view
    /// runs the code it ran before the registry had this form.
    @inlinable @inline(never)
    func viewUnlessSoleStoredCalled<P>(_ body: (P) -> Void) -> ProtocolView<P>? {
        if callSoleStored(body) { return nil }
        return madeViewIfObserved(for: P.self)
    }

    /// Calls `body` with the sole stored observer, if the registry holds
    /// one (see ``SoleStoredObserver``): true when the call was made or the
    /// observer does not conform to `P`, false when the registry has views
    /// (or none at all) by now. Decides `P` first, under the writer lock,
    /// when no protocol is decided yet; moves the registry to its lists (and
    /// returns false) when the object cannot hold `P`'s answer.
    @inlinable
    func callSoleStored<P>(_ body: (P) -> Void) -> Bool {
        while true {
            let called = withReadSection { () -> Bool? in
                // Loaded inside the section: the object stays allocated until it ends.
                guard let called = views.withSoleStored({ $0.call(body) }) else { return false }
                return called ? true : nil
            }
            if let called { return called }
            // Not decided for `P`: decide (or move to the lists), then look again.
            decideSoleStored(for: P.self)
        }
    }

    /// Stores the observers added since the last call in every view.
    @usableFromInline
    func storePendingAdds() {
        // Set only under the lock of a writer state already published.
        guard let made = writerStateWord.existing else { return }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        storePendingLocked(state, keepingSoleStored: true)
    }

    /// The view of observers conforming to `P`, made on first use (with the
    /// writer state, if no observer was ever added). Lock-free unless it
    /// has to be made.
    @inlinable
    func view<P>(for type: P.Type) -> ProtocolView<P> {
        existingView(for: type) ?? makeView(for: type)
    }

    /// The view of observers conforming to `P` if it was made; lock-free.
    @inlinable
    func existingView<P>(for type: P.Type) -> ProtocolView<P>? {
        let key = ObjectIdentifier(type)
        // Acquire: pairs with the release that published the node, so its
        // fields (and the view's list) are visible.
        // Nil with a sole stored observer: no views.
        var node = views.loadHead(ordering: .acquiring)
        while let current = node {
            let found = current._withUnsafeGuaranteedRef { $0.key == key ? $0.view : nil }
            if let found { return unsafeDowncast(found, to: ProtocolView<P>.self) }
            node = current._withUnsafeGuaranteedRef { $0.next }
        }
        return nil
    }

    /// A send's view of `P` when it has none yet: nil (nothing to call, no
    /// view made) when no observer was ever added. Otherwise the view, made
    /// now. An observer whose add returned before the send started made the
    /// writer state first (its load acquires that publication).
    @usableFromInline
    func madeViewIfObserved<P>(for type: P.Type) -> ProtocolView<P>? {
        guard let made = writerStateWord.existing else { return nil }
        let state = made.takeUnretainedValue()
        return makeView(for: type, in: state)
    }

    @usableFromInline
    func makeView<P>(for type: P.Type) -> ProtocolView<P> {
        makeView(for: type, in: writerState)
    }

    private func makeView<P>(for type: P.Type, in state: RegistryWriterState) -> ProtocolView<P> {
        state.lock()
        defer { state.unlock() }
        let key = ObjectIdentifier(type)
        if let existing = state.view(for: key) {
            return unsafeDowncast(existing, to: ProtocolView<P>.self)
        }
        sweepDeadObserversLocked(state, force: false)
        storePendingLocked(state, keepingSoleStored: false)
        moveSoleStoredToTableLocked(state)
        let view = ProtocolView<P>(deadFlag: deadFlagLocked(state))
        let node = ProtocolViewNode(key: key, view: view)
        // Known to writers before it is filled, so that an observer added by
        // a deinit running while it is filled goes into it like any other
        // add; published to readers only once filled, so that a concurrent
        // first `withObservers` waits here (for the lock) instead of seeing
        // a partial list.
        state.views.append(node)
        state.beginStoring()
        // In the order they were registered (the order a view made before
        // their adds would hold them in). An observer held as its box alone
        // gets its record back, in the table, before any store runs code
        // that may reach it.
        var registered: [RegisteredObserver] = []
        if let table = state.table {
            for case .stored(let stored) in table.storedValues {
                if let record = stored.record {
                    registered.append(record)
                } else {
                    let record = RegisteredObserver(expanding: stored.soleBox)
                    table.updateValue(.stored(StoredRegistration(record)), in: state)
                    registered.append(record)
                }
            }
        }
        registered.sort { $0.generation < $1.generation }
        for record in registered {
            addLocked(record, to: view)
        }
        if state.endStoring() {
            for record in registered { compactLocked(record, in: state) }
        }
        // Linked at the head now (not before filling: a view made by a
        // callback during the filling was linked meanwhile). Release: a
        // reader that acquires the node sees the filled list.
        node.next = views.loadHead(ordering: .relaxed)
        views.publish(head: Unmanaged.passUnretained(node))
        return view
    }

    // MARK: The sole stored observer

    /// Decides `P` for the sole stored observer, or moves the registry to
    /// its table and lists when the observer cannot hold `P`'s answer (its
    /// protocol is another one, or `P` needs a view). Takes the writer lock.
    @usableFromInline
    func decideSoleStored<P>(for type: P.Type) {
        guard let made = writerStateWord.existing else { return }
        let state = made.takeUnretainedValue()
        state.lock()
        defer { state.unlock() }
        guard let stored = soleStoredLocked() else { return }
        let decided = stored.protocolKey.load(ordering: .relaxed)
        // Decided for `P` by a send that held the lock first: nothing to do.
        if decided == UInt(bitPattern: ObjectIdentifier(P.self)) { return }
        guard decided == 0 else {
            // Decided for another protocol: the lists take over.
            moveSoleStoredToTableLocked(state)
            return
        }
        guard let strong = stored.observer.strongObserver() else {
            // Deallocating: never called again, dropped now.
            unpublishSoleStoredLocked()
            return
        }
        if !stored.decide(P.self, for: strong) { moveSoleStoredToTableLocked(state) }
        // Released last: a deinit may run and change the registry.
        withExtendedLifetime(strong) {}
    }

    /// The sole stored observer, if the registry holds one (never while it
    /// has an identity table). Lock held.
    @inline(__always)
    private func soleStoredLocked() -> SoleStoredObserver? {
        views.soleStored
    }

    /// Takes the sole stored observer out of the view word (its
    /// registration ends) and retires it. Lock held.
    private func unpublishSoleStoredLocked() {
        views.retireSoleStored()
    }

    /// Moves the sole stored observer's registration into the identity
    /// table as a stored record (same generation), before a second
    /// observer or a view needs the table. Lock held.
    private func moveSoleStoredToTableLocked(_ state: RegistryWriterState) {
        guard let stored = soleStoredLocked() else { return }
        unpublishSoleStoredLocked()
        let strong = stored.observer.strongObserver()
        if let strong {
            let table = state.table ?? IdentityTable()
            state.table = table
            let record = RegisteredObserver(strong, delivery: .synchronous, generation: stored.generation)
            table.updateValue(.stored(StoredRegistration(record)), in: state)
            storeLocked(record, in: state)
        }
        // Released last, the registry consistent: a deinit may run and change it.
        withExtendedLifetime(strong) {}
    }

    /// Registrations held, dead observers not yet dropped included. Lock held.
    private func entryCountLocked(_ state: RegistryWriterState) -> Int {
        state.entryCount + (soleStoredLocked() == nil ? 0 : 1)
    }

    // MARK: Writer internals (lock held)

    private func addLocked(_ record: RegisteredObserver, to view: AnyProtocolView) {
        guard !record.isRemoved, !record.isInView(view) else { return }
        guard let box = view.addIfConforming(record) else { return }
        if record.isRemoved {
            if let handle = box.handle { view.slots.remove(handle) }
        } else {
            record.recordStored(box, in: view)
        }
    }

    /// Stores `record` in every view it conforms to.
    private func storeLocked(_ record: RegisteredObserver, in state: RegistryWriterState) {
        state.beginStoring()
        var index = 0
        // By index: a deinit run by a store may make a view (appended).
        while index < state.views.count, !record.isRemoved {
            addLocked(record, to: state.views[index].view)
            index += 1
        }
        if state.endStoring() { compactLocked(record, in: state) }
    }

    /// When `record` is stored in exactly one view, and is still the
    /// table's entry for its observer, replaces it there by that view's
    /// box, which holds all the record would (a protocol-typed observer is
    /// then its box, its slot and its bucket). Only when no store is
    /// running (see `RegistryWriterState.beginStoring()`): a store running
    /// may still add the record to another view. Runs no user code.
    private func compactLocked(_ record: RegisteredObserver, in state: RegistryWriterState) {
        guard !record.isRemoved, let box = record.soleBox, let table = state.table else { return }
        // One probe: the entry is put back when it was not this record (a
        // deinit run by the store removed it and added the observer again).
        guard let replaced = table.updateValue(.stored(StoredRegistration(box)), in: state) else {
            preconditionFailure("ObserverRegistry: a stored record not in the table")
        }
        if case .stored(let current) = replaced, current.object === record { return }
        table.updateValue(replaced, in: state)
    }

    /// The identity table, made now if the registry holds its one pending
    /// registration inline (`sole`), which moves into it.
    @inline(__always)
    private func entriesLocked(_ state: RegistryWriterState) -> IdentityTable<RegistryEntry> {
        if let table = state.table { return table }
        let table = IdentityTable<RegistryEntry>()
        state.table = table
        if let sole = state.soleRegistration {
            state.sole = nil
            // Appended first: the table reads its identity from `pending`.
            state.pending.append(sole)
            table.updateValue(.pending(at: state.pending.count - 1), in: state)
        }
        return table
    }

    /// The flag sends set when they meet a dead observer, made with the
    /// first view (before it, no send can meet one).
    private func deadFlagLocked(_ state: RegistryWriterState) -> DeadObserverFlag {
        if let flag = state.deadFlag { return flag }
        // A per-key registry's was made with its state.
        let flag = DeadObserverFlag()
        state.deadFlag = flag
        return flag
    }

    /// Turns every pending observer still registered and alive into a stored
    /// one. Storing may run deinits that add or remove observers (this
    /// thread holds the recursive lock): it loops until nothing is pending.
    private func storePendingLocked(_ state: RegistryWriterState, keepingSoleStored: Bool) {
        // First make every pending entry consistent (no user code runs
        // here), then store, which may reclaim memory and so run deinits
        // that add or remove observers. The strong references taken to make
        // the records are released last, for the same reason.
        if keepingSoleStored, state.table == nil, state.views.isEmpty, defersAdds,
            let registration = state.soleRegistration
        {
            // One synchronous observer and no views: stored as the registry's
            // sole stored observer, which sends call without views (probing
            // takes no reference: no deinit runs here).
            state.sole = nil
            if !registration.observer.hasStartedDeinit {
                views.publish(
                    soleStored: SoleStoredObserver(registration.observer, generation: registration.generation))
            }
        }
        if state.table == nil, let registration = state.soleRegistration {
            // The inline registration goes straight into a new table as a
            // stored record (no pending array is made for it).
            state.sole = nil
            state.table = IdentityTable()
            if let made = makeRecordLocked(for: registration, in: state) {
                if !made.record.isRemoved { storeLocked(made.record, in: state) }
                withExtendedLifetime(made.strong) {}
            }
        }
        while !state.pending.isEmpty {
            if state.pending.count == 1 {
                // The common case (an add, then a send): no arrays. The
                // entry leaves `pending` once the table no longer reads it.
                let made = makeRecordLocked(for: state.pending[0], in: state)
                state.pending.removeAll(keepingCapacity: true)
                guard let made else { continue }
                if !made.record.isRemoved { storeLocked(made.record, in: state) }
                withExtendedLifetime(made.strong) {}
                continue
            }
            var made: [(record: RegisteredObserver, strong: AnyObject)] = []
            made.reserveCapacity(state.pending.count)
            for observer in state.pending {
                if let record = makeRecordLocked(for: observer, in: state) { made.append(record) }
            }
            // A small buffer is kept for the next adds; a large one (a burst
            // of adds) is not kept for the registry's lifetime.
            state.pending.removeAll(keepingCapacity: state.pending.capacity <= 64)
            for (record, _) in made where !record.isRemoved {
                storeLocked(record, in: state)
            }
            withExtendedLifetime(made) {}
        }
        hasPendingAdds.store(false, ordering: .releasing)
    }

    /// The record for a pending observer, entered in the table; nil (and
    /// the entry dropped) when the observer was deallocated while pending:
    /// it was never called. Runs no user code.
    private func makeRecordLocked(
        for observer: PendingObserver, in state: RegistryWriterState
    ) -> (record: RegisteredObserver, strong: AnyObject)? {
        let entries = entriesLocked(state)
        guard let strong = observer.strongObserver() else {
            entries.removeValue(forKey: observer.identifier, in: state)
            return nil
        }
        let record = RegisteredObserver(strong, delivery: observer.delivery, generation: observer.generation)
        entries.updateValue(.stored(StoredRegistration(record)), in: state)
        return (record, strong)
    }

    private func removeLocked(_ entry: RegistryEntry, in state: RegistryWriterState) {
        switch entry {
        case .pending(let index):
            // Never stored anywhere: take it out of `pending` (the last one
            // moves into its place). The table reads a pending entry's
            // identity from `pending`: the last one is copied into the hole
            // and its entry updated before it leaves the end.
            let lastIndex = state.pending.count - 1
            if Int(index) < lastIndex {
                state.pending[Int(index)] = state.pending[lastIndex]
                state.table?.updateValue(.pending(index: index), in: state)
            }
            state.pending.removeLast()
            if state.pending.isEmpty { hasPendingAdds.store(false, ordering: .releasing) }
        case .stored(let stored):
            removeLocked(stored)
        }
    }

    private func removeLocked(_ stored: StoredRegistration) {
        guard let record = stored.record else {
            // In one view, held as its box alone: no running store holds
            // a record of it (a store expands a box first, in the table).
            let box = stored.soleBox
            if let handle = box.handle { box.list.remove(handle) }
            return
        }
        record.remove { list, handle in
            list.remove(handle)
        }
    }

    /// Drops observers found deallocated: all of them when `force`,
    /// otherwise only when a send has reported one since the last sweep.
    @inline(__always)
    private func sweepDeadObserversLocked(_ state: RegistryWriterState, force: Bool) {
        // A sole stored observer is probed by every writer (no send reports
        // its death: it has no view).
        if state.table == nil, let stored = soleStoredLocked(), stored.observer.hasStartedDeinit {
            unpublishSoleStoredLocked()
        }
        // The plain load first: most writers find no death reported.
        guard force || (state.deadFlag?.isSet.load(ordering: .relaxed) == true && state.deadFlag!.take()) else {
            return
        }
        sweepDeadObserversLocked(state)
    }

    /// Before an add that would grow the table: drops every deallocated
    /// observer, pending or stored (a full sweep), then grows the table only
    /// if more than a quarter of its buckets still hold observers. So a
    /// registry that is never sent to nor counted does not keep dead
    /// observers' memory (each entry's unowned reference keeps its object's
    /// allocation), and a steady add + remove pays nothing for it.
    ///
    /// Bounds: the table has B buckets, at most B / 2 entries. It grows
    /// (to 2B) only when more than B / 4 observers are alive, so B stays
    /// under 8 × the most observers ever alive at once (or 16), and the dead
    /// entries it holds under half of that. Cost: a sweep walks B buckets;
    /// after one, at least B / 4 adds (no growth) or B / 2 adds (growth)
    /// come before the next: amortized O(1) per add.
    @inline(__always)
    private func sweepBeforeGrowthLocked(_ state: RegistryWriterState) {
        guard let entries = state.table, entries.isFullForInsertion else { return }
        sweepAndGrowLocked(state)
    }

    private func sweepAndGrowLocked(_ state: RegistryWriterState) {
        sweepDeadObserversLocked(state)
        // The sweep may have run deinits; the table is read again.
        guard let entries = state.table else { return }
        if entries.count &* 4 > entries.bucketCount { entries.grow(in: state) }
    }

    private func sweepDeadObserversLocked(_ state: RegistryWriterState) {
        guard let entries = state.table else {
            // Probing without a reference: no deinit runs here.
            if let sole = state.sole, sole.hasStartedDeinit {
                state.sole = nil
                hasPendingAdds.store(false, ordering: .releasing)
            }
            return
        }
        // Entries are read again one by one: checking liveness and removing
        // may run deinits that change the registry (even replace the table).
        for identifier in entries.identifiers(in: state) {
            guard let entry = state.table?.value(forKey: identifier, in: state), !entry.isAlive(in: state.pending)
            else { continue }
            guard let current = state.table?.value(forKey: identifier, in: state), current.isSame(as: entry)
            else { continue }
            state.table?.removeValue(forKey: identifier, in: state)
            removeLocked(current, in: state)
        }
    }
}

/// The writer side of an ``ObserverRegistry``: its lock and everything the
/// lock guards, in one object made by the registry's first add (see
/// `ObserverRegistry.writerStateWord`). Every stored property is only
/// touched under the lock (so exclusive without a run-time check).
///
/// Two forms: a registry that has had one registration since it was made
/// (or last emptied by `removeAllObservers`), synchronous and not yet
/// stored by a send, keeps it inline in `sole` (its generation is the last
/// one given) and has no table; any other registry keeps every
/// registration in `table` (and the pending ones in `pending`). The first
/// writer that needs the table moves `sole` into it.
final class RegistryWriterState: RegistryLock, @unchecked Sendable {
    // @unchecked: guarded by the lock it derives from.

    /// The one pending registration while there is no table: its observer,
    /// synchronous, of generation `nextGeneration - 1`.
    @exclusivity(unchecked)
    var sole: UnownedObserver?
    /// Every registered observer: stored in the views, or pending (its
    /// index in `pending`). Nil in the inline form.
    @exclusivity(unchecked)
    var table: IdentityTable<RegistryEntry>?
    /// Observers added but not yet stored in the views (registries whose
    /// adds wait for the next send).
    @exclusivity(unchecked)
    var pending: [PendingObserver] = []
    /// Every view's node, in creation order (what an add casts into),
    /// including one being filled, not yet linked: this array owns the
    /// nodes `views` reaches (readers borrow them at +0).
    @exclusivity(unchecked)
    var views: [ProtocolViewNode] = []
    /// The generation the next registration gets: a token cancels its own
    /// registration, never a later one of the same observer.
    @exclusivity(unchecked)
    var nextGeneration: UInt64 = 1
    /// Set by sends that meet a dead observer; made with the first view, or
    /// with the state for a keyed registry's per-key registry (whose flag
    /// has a parent, the keyed registry's).
    @exclusivity(unchecked)
    var deadFlag: DeadObserverFlag?
    /// How many stores of records into views are running (nested when a
    /// store runs a deinit that stores): see ``beginStoring()``.
    @exclusivity(unchecked)
    private var storingDepth: UInt32 = 0

    init(deadFlag: DeadObserverFlag?) {
        self.deadFlag = deadFlag
        super.init()
    }

    /// The inline registration, as a pending one.
    var soleRegistration: PendingObserver? {
        sole.map { PendingObserver($0, delivery: .synchronous, generation: nextGeneration &- 1) }
    }

    /// Whether the inline registration is that one.
    func isSole(_ identifier: ObjectIdentifier, _ generation: UInt64) -> Bool {
        guard let sole else { return false }
        return sole.identifier == identifier
            && generation == nextGeneration &- 1
    }

    /// Registrations held, dead observers not yet dropped included.
    var entryCount: Int { table?.count ?? (sole == nil ? 0 : 1) }

    /// Starts a store of records into views. While one runs, a record the
    /// table holds stays a record (the store may still add it to another
    /// view): only the outermost store, when it ends, replaces its records
    /// by their box (`ObserverRegistry.compactLocked`). Records a nested
    /// store touched stay records until a view is made.
    func beginStoring() { storingDepth += 1 }

    /// Ends a store; true when it was the outermost one.
    func endStoring() -> Bool {
        storingDepth -= 1
        return storingDepth == 0
    }

    /// The view of `key`, published or being filled.
    func view(for key: ObjectIdentifier) -> AnyProtocolView? {
        for node in views where node.key == key { return node.view }
        return nil
    }
}

/// What an ``ObserverRegistry`` knows of one registered observer: one word
/// (the index's 32 bits leave the reference's spare bits for the case), so
/// an identity table's bucket is 8 bytes: the table reads the observer's
/// identity from the record or box, or from the pending observer the index
/// names.
///
/// `stored` is the first case, so its case bits are 0: the word of a stored
/// entry is the plain address of the record (or box), the only reference
/// the registry's table keeps to it, which a leak checker (LeakSanitizer)
/// and a debugger can follow. Declared after another case, it would carry
/// the reference's top spare bit set, and LeakSanitizer would report every
/// record a live table holds as leaked.
enum RegistryEntry: IdentityTableValue {
    /// Stored in the registry's views (or in none it conforms to).
    case stored(StoredRegistration)
    /// Added but not yet stored in the lists: `pending[index]`.
    case pending(index: UInt32)

    /// Pending adds a registry holds at most (then it stores them).
    static var maximumPendingCount: Int { Int(UInt32.max) }

    /// `.pending(index:)` for an index below ``maximumPendingCount``.
    static func pending(at index: Int) -> RegistryEntry { .pending(index: UInt32(truncatingIfNeeded: index)) }

    /// The observer's identity: the table's key for this entry.
    func identity(in state: RegistryWriterState) -> ObjectIdentifier {
        switch self {
        case .pending(let index): state.pending[Int(index)].identifier
        case .stored(let stored): stored.identifier
        }
    }

    func isAlive(in pending: [PendingObserver]) -> Bool {
        switch self {
        case .pending(let index): pending[Int(index)].observer.isAlive
        case .stored(let stored): stored.isAlive
        }
    }

    func generation(in pending: [PendingObserver]) -> UInt64 {
        switch self {
        case .pending(let index): pending[Int(index)].generation
        case .stored(let stored): stored.generation
        }
    }

    func isSame(as other: RegistryEntry) -> Bool {
        switch (self, other) {
        case (.pending(let left), .pending(let right)): left == right
        case (.stored(let left), .stored(let right)): left.object === right.object
        default: false
        }
    }
}

/// A stored registration as the identity table holds it: its record, or,
/// when the observer is stored in exactly one view and the store that
/// stored it has ended, that view's box alone, which holds what the record
/// would (the observer, the generation, the delivery in its details, its
/// list and handle).
/// One reference: a ``RegistryEntry`` stays one word.
struct StoredRegistration {
    /// A ``RegisteredObserver`` or an ``AnyConformingObserver``.
    let object: AnyObject

    init(_ record: RegisteredObserver) { object = record }
    init(_ box: AnyConformingObserver) { object = box }

    /// The record, or nil when the box alone is stored. One comparison of
    /// the object's type (a cast would ask the runtime).
    var record: RegisteredObserver? {
        guard ObjectIdentifier(type(of: object)) == ObjectIdentifier(RegisteredObserver.self) else { return nil }
        return unsafeDowncast(object, to: RegisteredObserver.self)
    }

    /// The box, when ``record`` is nil.
    var soleBox: AnyConformingObserver { unsafeDowncast(object, to: AnyConformingObserver.self) }

    // Each read in place: a copy of an `UnownedObserver` would retain and
    // release its unowned reference.
    var identifier: ObjectIdentifier {
        if let record { return record.observer.identifier }
        return soleBox.observer.identifier
    }
    var isAlive: Bool {
        if let record { return record.observer.isAlive }
        return soleBox.observer.isAlive
    }
    var generation: UInt64 {
        if let record { return record.generation }
        return soleBox.generation
    }
}

/// An observer added to an ``ObserverRegistry`` that its next
/// `withObservers` (or any writer that needs the lists) will store.
struct PendingObserver {
    /// Keeps the observer's allocation (not the object) alive.
    let observer: UnownedObserver
    let delivery: Delivery
    let generation: UInt64

    init(_ observer: AnyObject, delivery: Delivery, generation: UInt64) {
        self.init(UnownedObserver(observer), delivery: delivery, generation: generation)
    }

    init(_ observer: UnownedObserver, delivery: Delivery, generation: UInt64) {
        self.observer = observer
        self.delivery = delivery
        self.generation = generation
    }

    /// The observer's identity (its address: `observer` keeps the allocation).
    var identifier: ObjectIdentifier { observer.identifier }

    /// A strong reference to the observer, or nil once it is deallocating.
    func strongObserver() -> AnyObject? { observer.strongObserver() }
}

/// What the token of one ``ObserverRegistry/addObserver(_:delivery:fileID:line:)``
/// cancels: that registration of that observer, identified by its
/// generation (the registry keeps no reference to it).
final class ObserverRegistration: SubscriptionRegistration, @unchecked Sendable {
    // @unchecked: immutable; the registry is thread-safe.
    /// The registry, held without owning it: a token does not keep its
    /// registry alive (its owner may be long gone while an observer still
    /// keeps the token), and a `weak` reference would give the registry a
    /// side table that every later retain and release of it goes through.
    let registry: UnownedObserver
    let identifier: ObjectIdentifier
    let generation: UInt64

    init(registry: UnownedObserver, identifier: ObjectIdentifier, generation: UInt64) {
        self.registry = registry
        self.identifier = identifier
        self.generation = generation
    }

    override func cancelSubscription() -> Bool {
        registry.withLive(ObserverRegistry.self) { $0.cancelRegistration(of: identifier, generation: generation) }
            ?? false
    }

    override var isSubscriptionActive: Bool {
        registry.withLive(ObserverRegistry.self) { $0.isRegistrationActive(of: identifier, generation: generation) }
            ?? false
    }
}
