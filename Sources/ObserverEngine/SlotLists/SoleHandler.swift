import CObserverCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one plain closure subscribed to an `Event` or an `ObservableValue`
/// that has no slot list: the source's observers word points at it (tagged,
/// see ``ObserversWord``), so a source with one closure subscriber pays
/// for its own object and this one (40 bytes, a 48-byte heap block), not
/// for a list. Its token cancels through it (it is the token's
/// registration). The second subscription moves it into a slot list.
/// A `KeyedEvent` keeps its one closure the same way, with its key
/// (``KeyedSoleHandler``, ``KeyedEventObservers``).
///
/// Its state word says where it is, and serializes everything that takes it
/// out of its source's word (a cancel, an `unsubscribeAll`, the move into a
/// list, the source's `deinit`) without a lock of the source's own:
/// - the address of the source's observers word: attached (the word holds
///   this handler). While attached, the word changes only under this
///   handler's lock, so whoever holds the lock finds the handler there.
/// - 0: removed (cancelled, unsubscribed, or its source is gone). Final.
/// - a retained `Subscription` with bit 1 set: moved into the source's slot
///   list, as that subscription's closure; the token forwards to it. Final.
/// - bit 0 set on an attached address: locked. The holder ends with a
///   store of the next state. Nothing that can call user code runs under
///   it (closures are retained and released, never called), so a holder
///   is never blocked by a waiter; waiters spin, yielding the processor.
///
/// The source's `deinit` takes the lock before it lets its memory go, so a
/// cancel that holds the lock can use the source's word; a cancel that
/// finds the state 0 does nothing.
///
/// Senders call its ``closure`` inside a read section that loaded the word. A
/// handler taken out of the word drops its closure (the token may keep the
/// object, never the closure's captures) and gives back the word's
/// reference only after a grace period (``retire(_:)``), or at once
/// in its source's `deinit`, when no send of the source runs.
@usableFromInline
package class SoleHandler<Value>: SoleHandlerRetirement, @unchecked Sendable {
    // @unchecked: `closure` is written once more, by ``dropHandler()``, when
    // no reader can see it; the state word is only accessed atomically. The
    // closure's own sendability is checked where it is subscribed
    // (`@Sendable` there).

    /// First stored property: the state's word (see `AtomicWord`).
    private var stateStorage: AtomicWordStorage<UInt>

    /// The closure; a no-op once dropped. Noncopyable, so that a send
    /// calls it in place (a copy would retain and release its context per
    /// delivery). Unchecked exclusivity: written only when no reader can
    /// see the handler (at init, and by ``dropHandler()``), so the send
    /// path reads it with no access check.
    @usableFromInline @exclusivity(unchecked)
    package final var closure: SoleClosure<Value>

    private var state: AtomicWord<UInt> { AtomicWords.first(self) }

    private static var lockedBit: UInt { 1 }
    private static var movedBit: UInt { 2 }

    /// A handler attached to the source word at `word` (which the caller
    /// then publishes it in).
    @usableFromInline
    package init(_ handler: @escaping (Value) -> Void, attachedTo word: UnsafeMutableRawPointer) {
        self.stateStorage = AtomicWordStorage(UInt(bitPattern: word))
        self.closure = SoleClosure(handler)
    }

    deinit {
        // No other reference exists: a plain read of the final state.
        let final = state.load(ordering: .acquiring)
        if final & Self.movedBit != 0 {
            Unmanaged<Subscription>.fromOpaque(UnsafeRawPointer(bitPattern: final & ~Self.movedBit)!).release()
        }
    }

    /// Releases the closure (its captures): once the handler has left its
    /// source's word and no reader can be calling it. A subclass drops what
    /// else it keeps for its sends.
    package override func dropHandler() {
        closure = SoleClosure { _ in }
    }

    /// Where the handler is, as seen by ``lockIfAttached()``.
    package enum Place {
        /// Attached to the source word at this address; the caller holds
        /// the lock and ends it with ``detach()`` or ``move(into:)``.
        case attached(UnsafeMutableRawPointer)
        /// Moved into a slot list as this subscription.
        case moved(Subscription)
        /// Removed.
        case removed
    }

    /// A value of the state word, decoded: the one reading of its bits.
    private enum State {
        /// Attached to the source word at this address, unlocked.
        case attached(UnsafeMutableRawPointer)
        /// Attached, and a holder has the lock: it ends with a new state.
        case locked
        /// Moved into a slot list as this subscription (the handler keeps
        /// it until its own deinit).
        case moved(Subscription)
        case removed
    }

    /// The state now (acquire: pairs with the release that ended the
    /// previous holder's section, so its stores, the source word's new
    /// value and the moved subscription's fields, are visible), and its word.
    private var current: (state: State, word: UInt) {
        let word = state.load(ordering: .acquiring)
        if word == 0 { return (.removed, word) }
        if word & Self.movedBit != 0 {
            let moved = UnsafeRawPointer(bitPattern: word & ~Self.movedBit)!
            return (.moved(Unmanaged<Subscription>.fromOpaque(moved).takeUnretainedValue()), word)
        }
        if word & Self.lockedBit != 0 { return (.locked, word) }
        return (.attached(UnsafeMutableRawPointer(bitPattern: word)!), word)
    }

    /// Takes the lock if the handler is attached; waits while another
    /// holder has it. Acquire on success, as the loads.
    package final func lockIfAttached() -> Place {
        var spins = 0
        while true {
            let (current, word) = self.current
            switch current {
            case .removed:
                return .removed
            case .moved(let subscription):
                return .moved(subscription)
            case .attached(let address):
                let claimed = state.compareExchange(
                    expected: word, desired: word | Self.lockedBit, ordering: .acquiring)
                if claimed.exchanged { return .attached(address) }
            case .locked:
                spins += 1
                if spins > 64 { sched_yield() }
            }
        }
    }

    /// Ends the lock: the handler is no longer in its source's word (the
    /// holder took it out). Release: orders the holder's store to the
    /// source word before the state a later locker acquires.
    package final func detach() {
        didLeaveWord()
        state.store(0, ordering: .releasing)
    }

    /// Ends the lock: the handler now lives on in a slot list as
    /// `subscription` (retained here), to which cancels forward.
    package final func move(into subscription: Subscription) {
        didLeaveWord()
        let moved = UInt(bitPattern: Unmanaged.passRetained(subscription).toOpaque()) | Self.movedBit
        state.store(moved, ordering: .releasing)
    }

    /// Takes this handler out of its source's observers word `word`, which
    /// holds it: the one removal of a sole handler (a cancel of its token, a
    /// removal of every subscription, the source's `deinit`; see
    /// ``ObserversWord``). The caller holds the lock (``lockIfAttached()``
    /// returned `.attached`), which this ends as removed. `readersDone`: no
    /// send of the source can be calling the handler (its `deinit`), so its
    /// closure and the word's reference go now; otherwise after a grace
    /// period.
    package final func removeLocked(from word: AtomicWord<UnsafeMutableRawPointer?>, readersDone: Bool) {
        ObserversWord<Value, SoleHandler, AnyObject>(word).exchange(self, for: nil)
        detach()
        if readersDone {
            dropHandler()
            Unmanaged.passUnretained(self).release()
        } else {
            SoleHandler.retire(Unmanaged.passUnretained(self))
        }
    }

    /// Called once, by the holder of the lock, as the handler leaves its
    /// source's word (``detach()`` or ``move(into:)``): for what a subclass
    /// counts while it is there.
    package func didLeaveWord() {}

    /// Same contract as ``Subscription/cancel()``.
    package final override func cancelSubscription() -> Bool {
        switch lockIfAttached() {
        case .removed:
            return false
        case .moved(let subscription):
            return subscription.cancel()
        case .attached(let address):
            // Attached: the source word at `address` holds this handler,
            // and the source cannot finish its deinit while we hold the lock.
            let word = AtomicWord<UnsafeMutableRawPointer?>(
                at: address.assumingMemoryBound(to: AtomicWordStorage<UnsafeMutableRawPointer?>.self))
            removeLocked(from: word, readersDone: false)
            return true
        }
    }

    /// Same contract as ``Subscription/isActive``.
    package final override var isSubscriptionActive: Bool {
        while true {
            switch current.state {
            case .removed: return false
            case .moved(let subscription): return subscription.isActive
            case .attached: return true
            // A holder is deciding: attached until it ends.
            case .locked: sched_yield()
            }
        }
    }

    /// Once every read section in progress has ended (a sender may still be
    /// calling `handler`), drops its closure and gives back the reference
    /// its source's word held. The word no longer holds it. The core's
    /// bookkeeping goes in a block allocated for this retirement alone, so
    /// a handler carries none of it while it is in use.
    package static func retire(_ handler: Unmanaged<SoleHandler>) {
        RetiredReference.retire(handler.toOpaque(), release: releaseRetiredSoleHandler)
    }
}

/// A ``SoleHandler``'s closure, borrowed in place by ``call(_:)``.
@usableFromInline
package struct SoleClosure<Value>: ~Copyable {
    @usableFromInline package let handler: (Value) -> Void

    @inlinable
    package init(_ handler: @escaping (Value) -> Void) {
        self.handler = handler
    }

    /// Calls the closure with `value`, borrowing it.
    @inlinable @inline(__always)
    package func call(_ value: Value) { handler(value) }
}

/// What every ``SoleHandler`` is to the core's release callback, which
/// knows no `Value`. Declares no stored properties (see `AtomicWord`).
@usableFromInline
package class SoleHandlerRetirement: SubscriptionRegistration, @unchecked Sendable {
    /// Releases the closure; see ``SoleHandler/dropHandler()``.
    package func dropHandler() {}
}

/// `oc_retire`'s release for ``SoleHandler/retire(_:)``: after the
/// grace period, drops the closure, frees the record and gives back the
/// word's reference.
private let releaseRetiredSoleHandler: @convention(c) (UnsafeMutableRawPointer) -> Void = { record in
    let handler = Unmanaged<SoleHandlerRetirement>.fromOpaque(RetiredReference.take(from: record))
    handler._withUnsafeGuaranteedRef { $0.dropHandler() }
    handler.release()
}
