import Foundation

/// The parts of an ``ObservableValue`` that most values never use, made the
/// first time one is needed and kept until the value is deallocated: the
/// duplicate check (made with the value when it skips duplicates), what
/// Swift's Observation sees (the first read of `value`), the setters
/// waiting for the turn (the first setter that has to wait), and the values
/// handlers set during a round (the first such set). A value none of them
/// touched keeps only a nil word for them.
///
/// This base holds what needs no `Value`: the waiters and the observation,
/// in words the turn reaches without knowing the value's type. The value
/// makes a ``TypedValueExtras``.
@usableFromInline
class ValueExtras: @unchecked Sendable {
    // @unchecked: `words` are atomic; the condition and the registrar are
    // thread-safe; the subclass's fields are touched only by the thread
    // holding the turn.

    /// First stored property: the words of the turn's waiting room (first:
    /// ``NotificationTurn`` finds them there) and the observation's
    /// reference (see `AtomicWord`).
    @usableFromInline
    var words = Words()

    @usableFromInline
    struct Words {
        @usableFromInline var room = HandOffLock.WaitingRoom.Words()
        @usableFromInline var observation = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)
        @usableFromInline init() {}

        @inlinable static var roomOffset: Int { 0 }
        @inlinable static var observationOffset: Int { MemoryLayout<HandOffLock.WaitingRoom.Words>.stride }
    }

    /// The setters waiting for the turn (in `NotificationTurn.wait(by:in:)`).
    @usableFromInline
    final var room: HandOffLock.WaitingRoom { HandOffLock.WaitingRoom(in: self, at: Words.roomOffset) }

    /// The value's ``ValueObservation`` (retained), nil until `value` is
    /// first read where Observation exists. Never cleared.
    @usableFromInline
    final var observationWord: AtomicWord<UnsafeMutableRawPointer?> {
        AtomicWords.word(self, at: Words.observationOffset)
    }

    @usableFromInline
    init() {}

    deinit {
        room.release()
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
                LazyObjectWord<ValueObservation>(observationWord).release()
            }
        #endif
    }

    // MARK: Observation

    /// Whether a set must announce itself (``announceWillSet()`` and
    /// ``announceDidSet()``): true once `value` has been read where
    /// Observation exists.
    @inlinable
    final var isArmed: Bool {
        // Sequentially consistent, pairing with the publication in
        // `registerAccess()`: a set that does not see it comes before it in
        // the single total order, so before any tracking the read belongs to
        // could be installed.
        observationWord.load(ordering: .sequentiallyConsistent) != nil
    }

    /// Registers a read of `value` with Observation (`withObservationTracking`,
    /// SwiftUI), making the observation on the first read. Nothing where
    /// Observation does not exist.
    @usableFromInline
    final func registerAccess() {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
                madeObservation.access()
            }
        #endif
    }

    @usableFromInline
    final func announceWillSet() {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
                existingObservation?.willSet()
            }
        #endif
    }

    @usableFromInline
    final func announceDidSet() {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
                existingObservation?.didSet()
            }
        #endif
    }

    #if canImport(Observation)
        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
        final var existingObservation: ValueObservation? {
            LazyObjectWord<ValueObservation>(observationWord).existing?.takeUnretainedValue()
        }

        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
        final var madeObservation: ValueObservation {
            // Sequentially consistent, pairing with `isArmed`.
            LazyObjectWord<ValueObservation>(observationWord).made(publishing: .sequentiallyConsistent) {
                ValueObservation()
            }.takeUnretainedValue()
        }
    #endif
}

/// The ``ValueExtras`` of an ``ObservableValue`` of `Value`.
@usableFromInline
final class TypedValueExtras<Value>: ValueExtras, @unchecked Sendable {
    /// Non-nil when sets of an equal value are skipped.
    @usableFromInline
    let isDuplicate: ((Value, Value) -> Bool)?

    /// Values set by handlers during a round, delivered after it. Touched
    /// only by the thread holding the turn.
    @usableFromInline
    @exclusivity(unchecked)
    var pending: [Value] = []

    /// The value of the round in progress, or of the latest one started,
    /// while a set holding the turn may have stored a later one (nil
    /// otherwise: the round's value is then the stored one). What a new
    /// observer replays when it subscribes from inside the turn. Touched only
    /// by the thread holding the turn; nil whenever nobody holds it.
    @usableFromInline
    @exclusivity(unchecked)
    var roundValue: Value?

    @usableFromInline
    init(isDuplicate: ((Value, Value) -> Bool)?) {
        self.isDuplicate = isDuplicate
    }
}
