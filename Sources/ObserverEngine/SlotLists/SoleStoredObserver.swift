import CObserverCore

/// The one observer of a protocol registry (`ObserverRegistry`) that holds a single
/// synchronous registration once a `withObservers` has stored it, with the
/// one protocol it has been called through: what `withObservers` calls
/// without a protocol view, a slot list or an identity table. A registry
/// with one observer pays for itself, its writer state and this object.
///
/// The registry publishes it in its views word (``RegistryViewsWord``), in
/// place of the list of views. Senders load that word inside a read section
/// and borrow the object; the registry's writers (under its writer lock)
/// take it out of the word and retire it (``retire(_:)``): it is released
/// only after every read section in progress has ended. So a sender never
/// meets freed memory, and a writer never waits for a sender.
///
/// The protocol is decided by the first `withObservers` (under the writer
/// lock): `protocolKey` is written last, with a release, after `witness`,
/// and never changes afterwards; a sender that loads it (acquiring) and
/// finds its own protocol reads `witness` as written. A call through
/// another protocol, a conformance isolated to an actor, or a cast that is
/// not one object reference followed by at most one witness table moves
/// the registry to its lists (the object is retired then).
@usableFromInline
package final class SoleStoredObserver: @unchecked Sendable {
    // @unchecked: `protocolKey` is atomic; `witness` is written once before
    // `protocolKey` publishes it; the rest is immutable.

    /// First stored property: the identity of the protocol decided, 0 while
    /// none is (see `AtomicWord`).
    @usableFromInline
    var protocolKeyWord = AtomicWordStorage<UInt>(0)

    /// The observer, held without owning it (see ``UnownedObserver``).
    @usableFromInline
    package let observer: UnownedObserver

    /// The word after the object reference in the protocol's value (its
    /// witness table), 0 for a one-word value (a class, `AnyObject`), or
    /// ``doesNotConform``. Written once, before `protocolKey`.
    @usableFromInline @exclusivity(unchecked)
    var witness: UInt = 0

    /// Which registration of the observer this is (see `ObserverRegistration`).
    package let generation: UInt64

    /// `witness` when the observer does not conform to the protocol: no
    /// witness table lives at address 1.
    @inlinable
    static var doesNotConform: UInt { 1 }

    /// The identity of the protocol decided, 0 while none is.
    @usableFromInline
    package var protocolKey: AtomicWord<UInt> { AtomicWords.first(self) }

    package init(_ observer: UnownedObserver, generation: UInt64) {
        self.observer = observer
        self.generation = generation
    }

    /// Calls `body` with the observer as `P`: true when this object has
    /// decided `P` (the observer was called, or does not conform, or is
    /// deallocating), false when it has not (the caller decides it under
    /// the writer lock). Inside a read section that loaded this object.
    @inlinable @inline(__always)
    package func call<P>(_ body: (P) -> Void) -> Bool {
        let key = protocolKey.load(ordering: .acquiring)
        guard key == UInt(bitPattern: ObjectIdentifier(P.self)) else { return false }
        let witness = witness
        if witness == Self.doesNotConform { return true }
        _ = observer.withCast(from: (observer.castReference, witness), as: P.self, body)
        return true
    }

    /// Decides `P` for good: the observer's cast to `P` when it is one
    /// object reference and at most one witness table (a class, `AnyObject`,
    /// one class-bound protocol) and its conformance is not isolated to an
    /// actor, or "does not conform". False (nothing decided) when this
    /// object cannot hold the answer: the registry then moves to its lists.
    /// Under the registry's writer lock, with `protocolKey` still 0.
    package func decide<P>(_ type: P.Type, for strong: AnyObject) -> Bool {
        guard MemoryLayout<P>.size == MemoryLayout<UInt>.size || MemoryLayout<P>.size == 2 * MemoryLayout<UInt>.size
        else { return false }
        switch ConformanceIsolation.of(strong, as: P.self) {
        case .none:
            witness = Self.doesNotConform
        case .nonisolated, .unknown:
            if let typed = strong as? P {
                var words: (UInt, UInt) = (0, 0)
                guard observer.store(cast: typed, into: &words), words.1 != Self.doesNotConform else { return false }
                witness = words.1
            } else {
                witness = Self.doesNotConform
            }
        case .mainActor, .otherGlobalActor, .severalGlobalActors:
            return false
        }
        protocolKey.store(UInt(bitPattern: ObjectIdentifier(P.self)), ordering: .releasing)
        return true
    }

    /// Whether this is the registration `generation` of the observer whose
    /// identity is `identifier`.
    package func isRegistration(of identifier: ObjectIdentifier, generation: UInt64) -> Bool {
        self.generation == generation && observer.identifier == identifier
    }

    /// Gives back `stored`, a reference a word no longer holds, once every
    /// read section in progress has ended.
    static func retire(_ stored: Unmanaged<SoleStoredObserver>) {
        RetiredReference.retire(stored.toOpaque(), release: releaseRetiredSoleStoredObserver)
    }
}

/// `oc_retire`'s release for ``SoleStoredObserver/retire(_:)``: frees the
/// record and gives back the word's reference.
private let releaseRetiredSoleStoredObserver: @convention(c) (UnsafeMutableRawPointer) -> Void = { record in
    Unmanaged<SoleStoredObserver>.fromOpaque(RetiredReference.take(from: record)).release()
}
