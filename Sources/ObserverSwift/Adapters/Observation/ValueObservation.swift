#if canImport(Observation)
    import Observation
#endif

/// What Swift's Observation sees of an ``ObservableValue``: reads of
/// `value` register access here, and sets announce the mutation here.
///
/// Observation exists on macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1
/// and later, and on the other platforms whose toolchain has the module:
/// ``make()`` returns a ``RegisteredValueObservation`` there. On older Apple
/// systems it returns this base, which registers nothing and is never armed,
/// so a set pays one relaxed load and announces nothing.
///
/// A set calls the registrar only once `value` has been read (through its
/// getter) at least once: Observation's tracking (`withObservationTracking`,
/// SwiftUI) only ever tracks a property its `apply` closure read, so a value
/// never read has nobody to tell. Once read, every later set announces
/// itself: a tracking may be installed at any time after its read, and the
/// registrar offers no way to ask whether one was.
@usableFromInline
class ValueObservation: @unchecked Sendable {
    // @unchecked: `armed` is atomic; the subclass's registrar is thread-safe.

    /// First stored property: `armed`'s word (see `AtomicWord`).
    @usableFromInline
    var armedWord = AtomicWordStorage<Bool>(false)

    /// True once `value` has been read where Observation exists; never cleared.
    @usableFromInline
    final var armed: AtomicWord<Bool> { AtomicWords.first(self) }

    @usableFromInline
    init() {}

    /// The observation for a new value: registered where Observation exists.
    @usableFromInline
    static func make() -> ValueObservation {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
                return RegisteredValueObservation()
            }
        #endif
        return ValueObservation()
    }

    /// Called by every read of `value`, before it reads the storage.
    @usableFromInline
    func access() {}

    /// Whether a set must announce itself (`willSet()` / `didSet()`).
    @inlinable
    final var isArmed: Bool {
        // Sequentially consistent, pairing with the store in `access()`: a
        // set that does not see that store comes before it in the single
        // total order, so before any tracking the read belongs to could be
        // installed.
        armed.load(ordering: .sequentiallyConsistent)
    }

    @usableFromInline
    func willSet() {}

    @usableFromInline
    func didSet() {}
}

#if canImport(Observation)
    /// A ``ValueObservation`` with Observation's registrar: where the module's
    /// runtime exists.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @usableFromInline
    final class RegisteredValueObservation: ValueObservation, Observation.Observable, @unchecked Sendable {
        // @unchecked: the registrar is thread-safe; `armed` is atomic.

        /// Non-generic, so its key path is a constant instantiated once per
        /// process (a key path into the generic `ObservableValue<Value>` would be
        /// instantiated at run time on every use).
        @usableFromInline
        let registrar = ObservationRegistrar()

        /// The observed property: its key path names the value to Observation.
        @usableFromInline
        var value: Void { () }

        @usableFromInline
        override func access() {
            // Sequentially consistent, pairing with `isArmed`: a set that does
            // not see this store comes before it in the single total order, so
            // before any tracking this read belongs to could be installed.
            if !armed.load(ordering: .relaxed) { armed.store(true, ordering: .sequentiallyConsistent) }
            registrar.access(self, keyPath: \.value)
        }

        @usableFromInline
        override func willSet() {
            registrar.willSet(self, keyPath: \.value)
        }

        @usableFromInline
        override func didSet() {
            registrar.didSet(self, keyPath: \.value)
        }
    }
#endif
