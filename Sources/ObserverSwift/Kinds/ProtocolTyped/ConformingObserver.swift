import ObserverEngine

/// Raw storage for one protocol-typed reference to an observer: the bytes of
/// the `P` value the one-time cast produced, held without owning anything.
/// Two words, kept in the box, fit a class, `AnyObject` and one class-bound
/// protocol (the reference and its witness table).
@usableFromInline
typealias ConformingObserverStorage = (UInt, UInt)

/// The same for wider casts, kept in the box's ``ConformingObserverDetails``:
/// six words fit every class-bound existential of up to five protocols and
/// an opaque existential (`any P`, `any P & Q` for non-class protocols).
@usableFromInline
typealias WideConformingObserverStorage = (UInt, UInt, UInt, UInt, UInt, UInt)

/// What a ``ConformingObserver`` holds beyond the common case (a
/// synchronous observer, its conformance not isolated to a global actor
/// other than the main actor, its cast at most two words): made only for
/// such boxes, so that the common one stays a 96-byte chunk.
@usableFromInline
final class ConformingObserverDetails: @unchecked Sendable {
    // @unchecked: immutable.
    @usableFromInline let delivery: Delivery
    /// Where every call runs when the conformance is isolated to a global
    /// actor other than the main actor (then `delivery` is not used).
    let globalActorQueue: GlobalActorQueue?
    /// The cast's bytes when wider than ``ConformingObserverStorage``.
    @usableFromInline let wideStorage: WideConformingObserverStorage

    init(delivery: Delivery, globalActorQueue: GlobalActorQueue?, wideStorage: WideConformingObserverStorage) {
        self.delivery = delivery
        self.globalActorQueue = globalActorQueue
        self.wideStorage = wideStorage
    }
}

/// Set by a send that finds a deallocated observer, so the next writer of
/// the registry removes that observer from every list.
@usableFromInline
final class DeadObserverFlag: @unchecked Sendable {
    // @unchecked: the flag's word is only accessed atomically; `parent` is immutable.

    /// First stored property: `isSet`'s word (see `AtomicWord`).
    var isSetWord = AtomicWordStorage<Bool>(false)
    var isSet: AtomicWord<Bool> { AtomicWords.first(self) }
    /// Also set with this flag: how a keyed registry learns that one of its
    /// per-key registries has a dead observer to sweep.
    let parent: DeadObserverFlag?

    init(parent: DeadObserverFlag? = nil) {
        self.parent = parent
    }

    @usableFromInline
    func set() {
        isSet.store(true, ordering: .releasing)
        parent?.set()
    }

    func take() -> Bool { isSet.exchange(false, ordering: .acquiring) }
}

/// The box a protocol view delivers to: one registered observer that
/// conforms to `P`, with the conformance decided once, when the box was made.
///
/// The box keeps the bytes of the cast value `observer as! P` without owning
/// them (in itself when they are two words at most, in its details
/// otherwise). For every value the cast can produce from a class instance (the
/// class itself, `AnyObject`, an existential of any protocols) those bytes
/// are the object reference in the first word followed by type metadata and
/// witness tables, which are never reference counted. A send takes a strong
/// reference with ``UnownedObserver/retainIfAlive()`` and moves it, together with the
/// stored bytes, into a `P` value it then owns: no dynamic cast and a single
/// retain/release pair per delivery. Casts whose result does not have that
/// shape (checked when the box is made) fall back to `as?` on every call.
@usableFromInline
final class ConformingObserver<P>: Subscriber, @unchecked Sendable {
    // @unchecked: every stored property is immutable after init or atomic
    // (the expiry); the box is created under the registry's writer lock and
    // read by sending threads after the C core publishes it.

    /// First stored property: the expiry's words (see `AtomicWord`;
    /// `Subscriber` declares no stored properties). Their 14 bytes leave
    /// two, where the two flags below sit (declaration order is layout
    /// order): a 88-byte object, a 96-byte chunk.
    var expiryWords = Expiry.Words()
    /// False when the cast result cannot be rebuilt from the stored bytes.
    @usableFromInline let hasStoredCast: Bool
    @usableFromInline let isSynchronous: Bool
    /// The observer, held without owning it (see ``UnownedObserver``).
    @usableFromInline let observer: UnownedObserver
    /// The cast's bytes when they fit (see ``ConformingObserverStorage``).
    @usableFromInline let storage: ConformingObserverStorage
    /// Nil for the common box: synchronous, not isolated to a global actor
    /// other than the main actor, its cast at most two words.
    @usableFromInline let details: ConformingObserverDetails?
    /// The observer's identity (its address: `observer` keeps the allocation).
    var identifier: ObjectIdentifier { observer.identifier }
    let expiry: Expiry
    @usableFromInline let deadFlag: DeadObserverFlag

    /// Decides once whether `observer` conforms to `P`; nil when it does
    /// not (or is dead).
    ///
    /// The runtime is asked first (``ConformanceIsolation``): a cast made off
    /// the main actor fails for a conformance isolated to it, so the cast
    /// alone would exclude such an observer for good when the first
    /// notification for `P` came from another thread. A conformance isolated
    /// to the main actor makes a box that delivers on the main actor whatever
    /// the registration's delivery (its methods must run there); one isolated
    /// to another global actor (`extension Job: @Worker P`) makes a box that
    /// delivers on that actor's shared instance, whatever the registration's
    /// delivery, through the one ``GlobalActorQueue`` of that actor, so calls
    /// to the observer keep their order across protocols and registries.
    /// The cast is kept when it was made on the conformance's actor, and
    /// made where the call runs otherwise.
    /// Conformances to the protocols of a composition isolated to two
    /// different global actors cannot all be called on one actor: such an
    /// observer is not stored for that composition.
    static func make(
        for registered: RegisteredObserver, in list: AnySlotList, deadFlag: DeadObserverFlag
    ) -> ConformingObserver<P>? {
        guard let strong = registered.strongObserver() else { return nil }
        let isolation = ConformanceIsolation.of(strong, as: P.self)
        var delivery = registered.delivery
        var globalActorQueue: GlobalActorQueue?
        switch isolation {
        case .none, .severalGlobalActors: return nil
        case .nonisolated, .unknown: break
        case .mainActor: delivery = .onMainActor
        case .otherGlobalActor(let actorType):
            guard let queue = GlobalActorQueue.queue(for: actorType) else { return nil }
            globalActorQueue = queue
        }
        let isIsolated = isolation.isIsolated
        guard let typed = strong as? P else {
            // Only an isolated conformance gets here (the cast ran off its
            // actor): it is cast again where it is called, on its actor.
            guard isIsolated else { return nil }
            return ConformingObserver(
                observer: registered.observer,
                storage: (0, 0, 0, 0, 0, 0), hasStoredCast: false, delivery: delivery,
                globalActorQueue: globalActorQueue, list: list, deadFlag: deadFlag)
        }
        var storage: WideConformingObserverStorage = (0, 0, 0, 0, 0, 0)
        let hasStoredCast = registered.observer.store(cast: typed, into: &storage)
        return ConformingObserver(
            observer: registered.observer, storage: storage,
            hasStoredCast: hasStoredCast, delivery: delivery,
            globalActorQueue: globalActorQueue, list: list, deadFlag: deadFlag)
    }

    private init(
        observer: UnownedObserver, storage: WideConformingObserverStorage,
        hasStoredCast: Bool, delivery: Delivery, globalActorQueue: GlobalActorQueue?,
        list: AnySlotList, deadFlag: DeadObserverFlag
    ) {
        self.observer = observer
        self.storage = (storage.0, storage.1)
        self.hasStoredCast = hasStoredCast
        if case .synchronous = delivery.route, globalActorQueue == nil {
            isSynchronous = true
        } else {
            isSynchronous = false
        }
        let isWide = MemoryLayout<P>.size > MemoryLayout<ConformingObserverStorage>.size
        details =
            isSynchronous && !(hasStoredCast && isWide)
            ? nil
            : ConformingObserverDetails(delivery: delivery, globalActorQueue: globalActorQueue, wideStorage: storage)
        self.expiry = Expiry(list: list)
        self.deadFlag = deadFlag
    }

    override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle, of: self) }
    override var isExpired: Bool { expiry.isExpired(of: self) }
    override var hasTarget: Bool { true }
    // `observer` keeps the allocation (see RegisteredObserver.isTarget).
    override func isTarget(_ object: AnyObject) -> Bool { observer.refers(to: object) }

    override func checkLiveness() -> Bool {
        if expiry.isExpired(of: self) { return false }
        if observer.isAlive { return true }
        observerDied()
        return false
    }

    /// The send path: calls `body` with the observer where its delivery says.
    @inlinable @inline(__always)
    func deliver(_ body: @escaping (P) -> Void) {
        if isSynchronous {
            callIfAlive(body)
        } else {
            deliverLater(body)
        }
    }

    /// Whether a call made now, on this thread, is where this observer's
    /// delivery says: a synchronous observer anywhere, a main-actor one on
    /// the main actor when no main-actor delivery is queued before it.
    @inlinable @inline(__always)
    var mayBeCalledHere: Bool {
        isSynchronous || (isMainActorDelivery && mainActorDeliveryMayRunInline)
    }

    @usableFromInline var isMainActorDelivery: Bool {
        guard let details else { return false }
        if details.globalActorQueue == nil, case .mainActor = details.delivery.route { return true }
        return false
    }

    @usableFromInline var mainActorDeliveryMayRunInline: Bool { MainActorDeliveries.mayRunInline }

    /// Calls `body` on this thread unless the observer is deallocating.
    @inlinable @inline(__always)
    func callIfAlive(_ body: (P) -> Void) {
        if !call(body) { observerDied() }
    }

    /// Calls `body` with the observer; false (nothing called) when the
    /// observer's deinit has started.
    @inlinable @inline(__always)
    func call(_ body: (P) -> Void) -> Bool {
        guard hasStoredCast else { return castAndCall(body) }
        // A constant once specialized: one of the two branches remains.
        if MemoryLayout<P>.size <= MemoryLayout<ConformingObserverStorage>.size {
            return call(body, rebuiltFrom: storage)
        }
        // A wide stored cast always has its details.
        return call(body, rebuiltFrom: details.unsafelyUnwrapped.wideStorage)
    }

    /// Calls `body` with the `P` value whose bytes are `stored`.
    @inlinable @inline(__always)
    func call<Stored>(_ body: (P) -> Void, rebuiltFrom stored: Stored) -> Bool {
        observer.withCast(from: stored, as: P.self, body)
    }

    /// The slow path for casts that cannot be stored: `as?` on every call.
    @usableFromInline
    func castAndCall(_ body: (P) -> Void) -> Bool {
        guard let strong = observer.strongObserver() else { return false }
        if let typed = strong as? P { body(typed) }
        return true
    }

    /// Queue, main-actor and global-actor deliveries: the observer is
    /// probed again where the call runs, so one deallocated in between is not
    /// called, and one removed from the registry meanwhile is not called
    /// either. The queued call keeps this box and its list alive (the
    /// registry may be gone).
    @usableFromInline
    func deliverLater(_ body: @escaping (P) -> Void) {
        if !observer.isAlive { return observerDied() }
        let list = expiry.retainedList
        // Only a box with details is not synchronous.
        let details = details.unsafelyUnwrapped
        if let globalActorQueue = details.globalActorQueue {
            // The queue runs the call inside a read section.
            let call = UncheckedSendable { [self] in
                if expiry.isSubscribed(in: list, of: self) { _ = self.call(body) }
            }
            globalActorQueue.enqueue { call.wrapped() }
            return
        }
        let isSubscribed = { [self] in expiry.isSubscribed(in: list, of: self) }
        details.delivery.run(ifSubscribed: isSubscribed) { [self] in _ = self.call(body) }
    }

    /// Removes this box from its view without blocking and tells the
    /// registry to drop the observer from its other lists.
    @usableFromInline
    func observerDied() {
        expiry.expire(of: self)
        deadFlag.set()
    }
}
