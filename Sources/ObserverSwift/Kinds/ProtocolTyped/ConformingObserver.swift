import ObserverEngine

/// The bytes of a protocol-typed reference to an observer beyond its first
/// word (the observer's address, which the box's ``UnownedObserver``
/// holds): for a class-bound protocol, its witness table; 0 for a class or
/// `AnyObject`. The same for every instance of one class, so the box's
/// details hold it, shared by the common boxes of that class. Held without
/// owning anything: witness tables are never reference counted.
@usableFromInline
typealias ConformingObserverWitness = UInt

/// The bytes of a protocol-typed reference to an observer that needs more
/// than the address and one witness word, kept in the box's
/// ``ConformingObserverDetails``: six words fit every class-bound
/// existential of up to five protocols and an opaque existential (`any P`,
/// `any P & Q` for non-class protocols).
@usableFromInline
typealias WideConformingObserverStorage = (UInt, UInt, UInt, UInt, UInt, UInt)

/// What a ``ConformingObserver`` needs beyond its observer: its cast's
/// witness word, where it delivers (and where its observer was added to
/// deliver, which the registry reads here), and the flag that reports its
/// death.
/// The common box (a synchronous observer, its conformance not isolated to
/// a global actor other than the main actor, its cast at most two words)
/// shares the instance its view keeps for its witness word, one per
/// conforming class (``ProtocolView/commonDetails(for:)``), so that it
/// stays a 64-byte chunk; any other box has its own.
@usableFromInline
final class ConformingObserverDetails: @unchecked Sendable {
    // @unchecked: immutable; the flag is internally synchronized.
    @usableFromInline let delivery: Delivery
    /// The delivery the observer was added with: `delivery`, unless its
    /// conformance is isolated to an actor (then the box runs there).
    let registeredDelivery: Delivery
    /// Where every call runs when the conformance is isolated to a global
    /// actor other than the main actor (then `delivery` is not used).
    let globalActorQueue: GlobalActorQueue?
    /// The cast's bytes when wider than the address and one witness word;
    /// otherwise its witness word second (the rest 0).
    @usableFromInline let wideStorage: WideConformingObserverStorage
    /// Set when a send finds the observer deallocated: the registry's flag.
    @usableFromInline let deadFlag: DeadObserverFlag
    /// How a box leaves its view's list, which is the same for every box
    /// of the view (each keeps its own handle in its expiry words).
    let expiry: Expiry

    /// The cast's second word when the cast is at most two words (see
    /// ``ConformingObserverWitness``).
    @inlinable var witness: ConformingObserverWitness { wideStorage.1 }

    init(
        delivery: Delivery, registeredDelivery: Delivery, globalActorQueue: GlobalActorQueue?,
        wideStorage: WideConformingObserverStorage, deadFlag: DeadObserverFlag, list: AnySlotList
    ) {
        self.delivery = delivery
        self.registeredDelivery = registeredDelivery
        self.globalActorQueue = globalActorQueue
        self.wideStorage = wideStorage
        self.deadFlag = deadFlag
        self.expiry = Expiry(list: list)
    }

    /// The details the common boxes of the view of `list` whose cast's
    /// witness word is `witness` share: a common box is synchronous, so its
    /// observer was added synchronous.
    convenience init(commonTo deadFlag: DeadObserverFlag, list: AnySlotList, witness: ConformingObserverWitness) {
        self.init(
            delivery: .synchronous, registeredDelivery: .synchronous, globalActorQueue: nil,
            wideStorage: (0, witness, 0, 0, 0, 0), deadFlag: deadFlag, list: list)
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
/// them. For every value the cast can produce from a class instance (the
/// class itself, `AnyObject`, an existential of any protocols) those bytes
/// are the object reference in the first word followed by type metadata and
/// witness tables, which are never reference counted. The first word is the
/// observer's address, which ``observer`` holds already; the box keeps the
/// second (``witness``), or, for a wider cast, all of them in its details. A
/// send takes a strong reference with ``UnownedObserver/retainIfAlive()``
/// and moves it, together with the stored bytes, into a `P` value it then
/// owns: no dynamic cast and a single retain/release pair per delivery.
/// Casts whose result does not have that shape (checked when the box is
/// made) fall back to `as?` on every call.
@usableFromInline
final class ConformingObserver<P>: AnyConformingObserver, @unchecked Sendable {

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
    static func make(for registered: RegisteredObserver, in view: ProtocolView<P>) -> ConformingObserver<P>? {
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
                observer: registered.observer, generation: registered.generation,
                storage: (0, 0, 0, 0, 0, 0), hasStoredCast: false, delivery: delivery,
                registeredDelivery: registered.delivery, globalActorQueue: globalActorQueue, view: view)
        }
        var storage: WideConformingObserverStorage = (0, 0, 0, 0, 0, 0)
        let hasStoredCast = registered.observer.store(cast: typed, into: &storage)
        return ConformingObserver(
            observer: registered.observer, generation: registered.generation, storage: storage,
            hasStoredCast: hasStoredCast, delivery: delivery, registeredDelivery: registered.delivery,
            globalActorQueue: globalActorQueue, view: view)
    }

    private init(
        observer: UnownedObserver, generation: UInt64, storage: WideConformingObserverStorage,
        hasStoredCast: Bool, delivery: Delivery, registeredDelivery: Delivery, globalActorQueue: GlobalActorQueue?,
        view: ProtocolView<P>
    ) {
        let isSynchronous: Bool
        if case .synchronous = delivery.route, globalActorQueue == nil {
            isSynchronous = true
        } else {
            isSynchronous = false
        }
        let details =
            isSynchronous && !(hasStoredCast && Self.isWide)
            ? view.commonDetails(for: storage.1)
            : ConformingObserverDetails(
                delivery: delivery, registeredDelivery: registeredDelivery, globalActorQueue: globalActorQueue,
                wideStorage: storage, deadFlag: view.deadFlag, list: view.conforming)
        super.init(
            observer: observer, generation: generation, hasStoredCast: hasStoredCast, isSynchronous: isSynchronous,
            details: details)
    }

    /// Whether a `P` is wider than the address and one witness word (its
    /// stored cast then lives in the details).
    @inlinable
    static var isWide: Bool { MemoryLayout<P>.size > MemoryLayout<(UInt, ConformingObserverWitness)>.size }

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
        if !Self.isWide {
            return call(body, rebuiltFrom: (observer.castReference, details.witness))
        }
        // A wide stored cast is in the box's own details.
        return call(body, rebuiltFrom: details.wideStorage)
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
}

/// What every ``ConformingObserver`` holds, whatever its protocol, which
/// knows the box's list and handle: the registry's identity table holds
/// the box itself while it is its observer's only one (see
/// `StoredRegistration`), and a record reaches its first box through it.
@usableFromInline
class AnyConformingObserver: Subscriber, @unchecked Sendable {
    // @unchecked: every stored property is immutable after init or atomic
    // (the expiry); the box is created under the registry's writer lock and
    // read by sending threads after the C core publishes it.

    /// First stored property: the expiry's words (see `AtomicWord`;
    /// `Subscriber` declares no stored properties). Their 14 bytes leave
    /// two, where the two flags below sit (declaration order is layout
    /// order): with the observer, the details and the generation, a 56-byte
    /// object, a 64-byte chunk.
    var expiryWords = Expiry.Words()
    /// False when the cast result cannot be rebuilt from the stored bytes.
    @usableFromInline let hasStoredCast: Bool
    @usableFromInline let isSynchronous: Bool
    /// The observer, held without owning it (see ``UnownedObserver``); its
    /// address is the first word of the cast.
    @usableFromInline let observer: UnownedObserver
    /// The details its view shares among the common boxes of one class
    /// (synchronous, not isolated to a global actor other than the main
    /// actor, their cast at most two words); the box's own for any other.
    @usableFromInline let details: ConformingObserverDetails
    /// The generation of the registration it was made for: the registry's
    /// identity table holds the box itself while it is the observer's only
    /// one (see `RegistryEntry`).
    let generation: UInt64

    init(
        observer: UnownedObserver, generation: UInt64, hasStoredCast: Bool, isSynchronous: Bool,
        details: ConformingObserverDetails
    ) {
        self.observer = observer
        self.generation = generation
        self.hasStoredCast = hasStoredCast
        self.isSynchronous = isSynchronous
        self.details = details
    }

    /// The observer's identity (its address: `observer` keeps the allocation).
    var identifier: ObjectIdentifier { observer.identifier }
    /// How it leaves its list (kept in the details, the same for a view's boxes).
    var expiry: Expiry { _read { yield details.expiry } }

    /// The list the box is stored in (strongly: writers and sends only).
    var list: AnySlotList { expiry.retainedList }
    /// Its handle in that list; nil before it was added.
    var handle: SlotHandle? { expiry.storedHandle(of: self) }

    override func didAdd(handle: SlotHandle) { expiry.didAdd(handle: handle, of: self) }
    override var isExpired: Bool { expiry.isExpired(of: self) }
    override var hasTarget: Bool { true }
    // `observer` keeps the allocation (see ``UnownedObserver``).
    override func isTarget(_ object: AnyObject) -> Bool { observer.refers(to: object) }

    override func checkLiveness() -> Bool {
        if expiry.isExpired(of: self) { return false }
        if observer.isAlive { return true }
        observerDied()
        return false
    }

    @usableFromInline var isMainActorDelivery: Bool {
        if details.globalActorQueue == nil, case .mainActor = details.delivery.route { return true }
        return false
    }

    @usableFromInline var mainActorDeliveryMayRunInline: Bool { MainActorDeliveries.mayRunInline }

    /// Removes this box from its view without blocking and tells the
    /// registry to drop the observer from its other lists.
    @usableFromInline
    func observerDied() {
        expiry.expire(of: self)
        details.deadFlag.set()
    }
}
