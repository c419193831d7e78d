import Observation

/// What Swift's Observation sees of an ``ObservableValue``: reads of
/// `value` register access here, and sets announce the mutation here.
///
/// Non-generic, so its key path is a constant instantiated once per
/// process (a key path into the generic `ObservableValue<Value>` would be
/// instantiated at run time on every use).
///
/// A set calls the registrar only once `value` has been read (through its
/// getter) at least once: Observation's tracking (`withObservationTracking`,
/// SwiftUI) only ever tracks a property its `apply` closure read, so a value
/// never read has nobody to tell. Once read, every later set announces
/// itself: a tracking may be installed at any time after its read, and the
/// registrar offers no way to ask whether one was.
@usableFromInline
final class ValueObservation: Observation.Observable, @unchecked Sendable {
    // @unchecked: the registrar is thread-safe; `armed` is atomic.

    /// First stored property: `armed`'s word (see `AtomicWord`).
    @usableFromInline
    var armedWord = AtomicWordStorage<Bool>(false)

    @usableFromInline
    let registrar = ObservationRegistrar()

    /// True once `value` has been read; never cleared.
    @usableFromInline
    var armed: AtomicWord<Bool> { AtomicWords.first(self) }

    @usableFromInline
    init() {}

    /// The observed property: its key path names the value to Observation.
    @usableFromInline
    var value: Void { () }

    /// Called by every read of `value`, before it reads the storage.
    @inlinable
    func access() {
        // Sequentially consistent, pairing with `isArmed`: a set that does
        // not see this store comes before it in the single total order, so
        // before any tracking this read belongs to could be installed.
        if !armed.load(ordering: .relaxed) { armed.store(true, ordering: .sequentiallyConsistent) }
        registrar.access(self, keyPath: \.value)
    }

    /// Whether a set must announce itself (`willSet()` / `didSet()`).
    @inlinable
    var isArmed: Bool {
        armed.load(ordering: .sequentiallyConsistent)
    }

    @inlinable
    func willSet() {
        registrar.willSet(self, keyPath: \.value)
    }

    @inlinable
    func didSet() {
        registrar.didSet(self, keyPath: \.value)
    }
}
