import Foundation

/// What an ``ObservableValue`` tells about its reads and sets once
/// something watches them: the value's ``ValueExtras`` keep one, made by
/// the first read that needs it. This class tells nobody; Swift's
/// Observation gets its subclass from `Adapters/Observation`, which makes
/// it (`ObservableValue.registerAccess()`).
@usableFromInline
class ValueAccessWatcher: @unchecked Sendable {
    // @unchecked: no state here; a subclass states its own reason.

    @usableFromInline
    init() {}

    /// Called by every read of `value`, before it reads the storage.
    @usableFromInline
    func access() {}

    /// Called by a set before it stores the new value.
    @usableFromInline
    func willSet() {}

    /// Called by a set after it stored the new value.
    @usableFromInline
    func didSet() {}
}

/// The parts of an ``ObservableValue`` that most values never use, made the
/// first time one is needed and kept until the value is deallocated: the
/// duplicate check (made with the value when it skips duplicates), the
/// watcher of its accesses (the first read of `value` where Swift's
/// Observation exists), the setters waiting for the turn (the first setter
/// that has to wait), and the values handlers set during a round (the first
/// such set). A value none of them touched keeps only a nil word for them.
///
/// This base holds what needs no `Value`: the turn's waiting room (it is
/// a ``NotificationTurnRoom``) and the watcher, attached there. The value
/// makes a ``TypedValueExtras``.
@usableFromInline
class ValueExtras: NotificationTurnRoom, @unchecked Sendable {
    // @unchecked: the room's words and the watcher's are atomic; the
    // watcher is thread-safe; the subclass's fields are touched only by the
    // thread holding the turn.

    /// The value's ``ValueAccessWatcher`` (retained), nil until one is
    /// made. Never cleared.
    @usableFromInline
    final var watcher: LazyObjectWord<ValueAccessWatcher> { attached(as: ValueAccessWatcher.self) }

    @usableFromInline
    override init() {}

    // MARK: The watcher

    /// Whether a set must announce itself (``announceWillSet()`` and
    /// ``announceDidSet()``): true once a watcher is made.
    @inlinable
    final var isArmed: Bool {
        // Sequentially consistent, pairing with the publication in
        // `madeWatcher(_:)`: a set that does not see it comes before it in
        // the single total order, so before any tracking the read belongs to
        // could be installed.
        watcher.isMade(ordering: .sequentiallyConsistent)
    }

    /// The watcher, made by `make` now if nobody made it yet.
    @usableFromInline
    final func madeWatcher(_ make: () -> ValueAccessWatcher) -> ValueAccessWatcher {
        // Sequentially consistent, pairing with `isArmed`.
        watcher.made(publishing: .sequentiallyConsistent, make).takeUnretainedValue()
    }

    @usableFromInline
    final func announceWillSet() {
        watcher.existing?.takeUnretainedValue().willSet()
    }

    @usableFromInline
    final func announceDidSet() {
        watcher.existing?.takeUnretainedValue().didSet()
    }
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
