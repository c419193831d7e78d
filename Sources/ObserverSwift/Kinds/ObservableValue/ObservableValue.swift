import Dispatch
import Foundation
import ObserverEngine

/// A value that notifies its subscribers whenever it is set: SwiftEvents'
/// `Observable<T>` and the minimal `Observable<T>(value:)` recipe, on the
/// lock-free core. (It is not called `Observable` so that a file can import
/// both ObserverSwift and Swift's `Observation` module.)
///
/// ```swift
/// final class Label: @unchecked Sendable { var text = "" }
/// let name = ObservableValue("Ada")
/// let label = Label()
/// name.subscribe(label) { label, name in label.text = name }   // label held weakly
/// name.value = "Grace"                                          // label.text == "Grace"
/// ```
///
/// Threading: every member may be called from any thread. A synchronous
/// handler runs on the setting thread before the setter returns; a handler
/// given a queue or the main actor runs there. Reading ``value`` never waits
/// for handlers.
///
/// Order: sets are serialized. A set from another thread waits until the
/// notification round in progress has ended, so every observer sees the
/// values in the order they were set, each exactly once (unless
/// `skipsDuplicates` drops an unchanged one). Because a round holds the turn
/// while handlers run, a synchronous handler must not block waiting for
/// another thread that sets the same value (or for two values whose handlers
/// set each other, set from two threads at once): that would deadlock, as
/// with any lock held around callbacks. Queue and main-actor handlers do not
/// hold the turn.
///
/// Reentrancy: a handler may set the same value again. The new value is
/// stored at once (``value`` returns it) and delivered to every observer
/// right after the round in progress ends, on the same thread, before the
/// outer setter returns — never nested inside the round, so no observer sees
/// the values out of order. A handler may also subscribe or cancel
/// subscriptions (a new observer is not called by the round in progress).
public final class ObservableValue<Value> {
    /// First stored property: the words of the observers, the turn, the
    /// storage and the extras (see `AtomicWord` and `ObservableValueWords`).
    @usableFromInline
    var words = ObservableValueWords()

    /// The storage's two copies of the value (see ``ValueStorage``): read
    /// and written through `storage` only, never as a property after `init`.
    @usableFromInline
    var copies: (Value, Value)

    /// Creates an observable value holding `value`.
    public init(_ value: Value) {
        copies = (value, value)
    }

    init(value: Value, isDuplicate: @escaping (Value, Value) -> Bool) {
        copies = (value, value)
        words = ObservableValueWords(extras: TypedValueExtras<Value>(isDuplicate: isDuplicate))
    }

    deinit {
        observers.release()
        storage.releasePublished()
        extras.release()
    }

    // MARK: Views of the words

    /// The observers: one slot list in the core, as for every observer kind.
    @inlinable
    var observers: EventObservers<Value> { ObservableValueWords.observers(of: self) }

    @inlinable
    var turn: NotificationTurn { ObservableValueWords.turn(of: self) }

    /// The stored value: written by the thread holding the turn, read by
    /// any thread without waiting for it.
    @inlinable
    var storage: ValueStorage<Value> { ObservableValueWords.storage(of: self) }

    /// The extras, made on first use and kept until the value is deallocated.
    @inlinable
    var extras: LazyObjectWord<TypedValueExtras<Value>> { ObservableValueWords.extras(of: self) }

    /// Calls `body` with the extras borrowed (no retain), or returns nil
    /// when nothing needed them yet.
    @inlinable @inline(__always)
    func withExistingExtras<Result>(_ body: (TypedValueExtras<Value>) -> Result) -> Result? {
        extras.withExisting(body)
    }

    /// The extras, made now if nothing needed them yet.
    @usableFromInline
    var madeExtras: TypedValueExtras<Value> {
        extras.made { TypedValueExtras<Value>(isDuplicate: nil) }.takeUnretainedValue()
    }

    /// The current value. Setting it notifies every observer (see the type's
    /// notes on order and reentrancy); reading it never waits for handlers.
    @inlinable
    public var value: Value {
        get {
            registerAccess()
            return storage.read()
        }
        set {
            assign(newValue)
        }
    }

    // MARK: The set path

    @inlinable
    func assign(_ newValue: Value) {
        // The reader identifies the calling thread while it runs.
        let reader = SectionReader.current
        if turn.admitsFastClaim {
            // One barrier enters the read section and claims the turn.
            if reader.beginClaiming(turn) {
                runRoundAndRelease(newValue, reader)
                // As below: the section ends after the turn is released.
                reader.end()
                return
            }
            // Taken (by this thread too, when a handler sets the value):
            // leave the section before waiting for the turn.
            reader.end()
        }
        assignWithoutFastClaim(newValue, reader)
    }

    /// A set whose fast claim failed or was not tried: from a handler of this
    /// value's round on this thread, or while another thread holds the turn
    /// or waits for it.
    @inlinable
    @inline(never)
    func assignWithoutFastClaim(_ newValue: Value, _ reader: SectionReader) {
        let thread = reader.threadIdentity
        if turn.isHeld(by: thread) {
            // A handler of this value's round on this thread: queue behind it.
            queueBehindRound(newValue)
            return
        }
        acquireTurn(by: thread)
        // While the turn is held, this thread counts as inside a delivery
        // (a read section): Observation's `onChange`, `==` and handlers run
        // here, and a wait for in-flight deliveries made from them must throw
        // rather than wait for a sender that waits for this turn. The section
        // ends after the turn is released, so deinits it runs hold nothing.
        reader.begin()
        runRoundAndRelease(newValue, reader)
        reader.end()
    }

    /// Waits for the turn (the slow path of a set).
    @usableFromInline
    func acquireTurn(by thread: UInt) {
        let turn = self.turn
        if turn.tryClaim(by: thread) { return }
        turn.wait(by: thread, in: madeExtras)
    }

    /// Stores `newValue` and, unless it is a skipped duplicate, delivers it
    /// to every observer present now; then delivers what handlers set
    /// meanwhile and releases the turn. Holding the turn, claimed since the
    /// last store, inside a read section entered on `reader`.
    @inlinable
    @inline(__always)
    func runRoundAndRelease(_ newValue: Value, _ reader: SectionReader) {
        if extras.existing != nil {
            runRoundAndReleaseWithExtras(newValue, reader)
            return
        }
        // Nothing but this store and the send runs before the round starts:
        // no duplicate check, no Observation to tell.
        let replaced = storage.write(newValue, fenced: true)
        // The replaced value is released here, before the round: its deinit
        // may read or set this value.
        withExtendedLifetime(replaced) {}
        sendRound(newValue, reader)
        if extras.existing == nil {
            // No extras: nobody waits for the turn, and no handler set the
            // value during the round.
            NotificationTurn.releaseWithoutExtras(ObservableValueWords.turnWord(of: self))
        } else {
            // A handler's set made the extras to queue its value there, or
            // another thread made them (a read, a setter that waits).
            finishTurnAndRelease(reader)
        }
    }

    /// The send of a round, not inlined: the send loop then keeps its
    /// values in registers whatever the set around it holds.
    @inlinable
    @inline(never)
    func sendRound(_ value: Value, _ reader: SectionReader) {
        observers.send(value, inSectionOf: reader)
    }

    @inlinable
    @inline(never)
    func runRoundAndReleaseWithExtras(_ newValue: Value, _ reader: SectionReader) {
        withExistingExtras { runRound(newValue, reader, extras: $0) }
        turn.release()
    }

    @inlinable
    @inline(never)
    func finishTurnAndRelease(_ reader: SectionReader) {
        withExistingExtras { finishTurn(reader, extras: $0) }
        turn.release()
    }

    @inlinable
    func runRound(_ newValue: Value, _ reader: SectionReader, extras: TypedValueExtras<Value>) {
        if store(newValue, fenced: true, extras: extras) {
            startRound(newValue, reader, extras: extras)
        }
        finishTurn(reader, extras: extras)
    }

    /// Stores `newValue` unless it is a skipped duplicate; true when stored.
    /// Holding the turn; `fenced`: the turn was claimed since the last store.
    @inlinable
    func store(_ newValue: Value, fenced: Bool, extras: TypedValueExtras<Value>) -> Bool {
        let storage = self.storage
        // From here until the round starts, user code may run (`==`,
        // Observation's callbacks) and ask for the round's value (a
        // replaying subscribe): keep it.
        if extras.roundValue == nil { extras.roundValue = storage.writerValue }
        // Stores are serialized by the turn: the writer reads its own copy.
        if let isDuplicate = extras.isDuplicate, isDuplicate(storage.writerValue, newValue) { return false }
        let announces = extras.isArmed
        if announces { extras.announceWillSet() }
        let replaced = storage.write(newValue, fenced: fenced)
        if announces { extras.announceDidSet() }
        // The replaced value is released here, before the round: its deinit
        // may read or set this value.
        withExtendedLifetime(replaced) {}
        return true
    }

    /// One round: every observer present now gets `value`. Holding the turn.
    @inlinable
    @inline(__always)
    func startRound(_ value: Value, _ reader: SectionReader, extras: TypedValueExtras<Value>) {
        extras.roundValue = value
        observers.send(value, inSectionOf: reader)
    }

    /// A set by the thread holding the turn (a handler's): stored at once,
    /// delivered after the round in progress.
    @usableFromInline
    func queueBehindRound(_ newValue: Value) {
        let extras = madeExtras
        if store(newValue, fenced: false, extras: extras) { extras.pending.append(newValue) }
    }

    /// Delivers what handlers set during the rounds, in order, and forgets
    /// the round's value. Holding the turn, about to release it.
    @inlinable
    @inline(__always)
    func finishTurn(_ reader: SectionReader, extras: TypedValueExtras<Value>) {
        if !extras.pending.isEmpty { deliverPendingValues(reader, extras: extras) }
        if extras.roundValue != nil { extras.roundValue = nil }
    }

    @usableFromInline
    func deliverPendingValues(_ reader: SectionReader, extras: TypedValueExtras<Value>) {
        var index = 0
        while index < extras.pending.count {
            // Read by index each time: handlers may append while we deliver.
            let next = extras.pending[index]
            startRound(next, reader, extras: extras)
            index += 1
        }
        extras.pending.removeAll()
    }

    /// Runs `body` holding the turn (or inside the round this thread already
    /// runs), then delivers what `body` caused to be set. For replaying
    /// binds: `body` gets the value of the round in progress or last started.
    func withTurn<Result>(_ body: (_ current: Value) -> Result) -> Result {
        let reader = SectionReader.current
        let thread = reader.threadIdentity
        let turn = self.turn
        if turn.isHeld(by: thread) {
            // The enclosing round delivers whatever `body` sets.
            let round: Value?? = withExistingExtras { $0.roundValue }
            return body((round ?? nil) ?? storage.writerValue)
        }
        acquireTurn(by: thread)
        // Inside a delivery while the turn is held (see `assign`).
        reader.begin()
        let result = body(storage.writerValue)
        withExistingExtras { finishTurn(reader, extras: $0) }
        turn.release()
        reader.end()
        return result
    }
}

extension ObservableValue: @unchecked Sendable where Value: Sendable {}

// @unchecked: the storage has one writer (the turn's holder) and lock-free
// readers (see `ValueStorage`); the extras' `pending` and `roundValue` are
// touched only by the thread holding the turn; every other word is atomic;
// the observers live in the internally synchronized core.
