#if canImport(Observation)
    import Observation

    /// What Swift's Observation sees of an ``ObservableValue``: reads of
    /// `value` register access here, and sets announce the mutation here.
    ///
    /// The value's ``ValueAccessWatcher``, made by the first read of `value`
    /// (``ObservableValue/registerAccess()``) where
    /// Observation exists: macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1
    /// and later, and the other platforms whose toolchain has the module.
    /// A set calls the registrar only once it exists: Observation's tracking
    /// (`withObservationTracking`, SwiftUI) only ever tracks a property its
    /// `apply` closure read, so a value never read has nobody to tell. Once
    /// read, every later set announces itself: a tracking may be installed
    /// at any time after its read, and the registrar offers no way to ask
    /// whether one was.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @usableFromInline
    final class ValueObservation: ValueAccessWatcher, Observation.Observable, @unchecked Sendable {
        // @unchecked: the registrar is thread-safe.

        /// Non-generic, so its key path is a constant instantiated once per
        /// process (a key path into the generic `ObservableValue<Value>` would be
        /// instantiated at run time on every use).
        @usableFromInline
        let registrar = ObservationRegistrar()

        /// The observed property: its key path names the value to Observation.
        @usableFromInline
        var value: Void { () }

        @usableFromInline
        override init() {}

        @usableFromInline
        override func access() {
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
