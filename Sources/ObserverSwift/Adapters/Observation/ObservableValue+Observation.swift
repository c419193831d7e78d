#if canImport(Observation)
    import Observation

    /// `withObservationTracking { _ = value.value } onChange: { ... }` fires when
    /// the value is set, so Observation-based code (SwiftUI views, `@Observable`
    /// models reading it) sees ObserverSwift values change. Where Observation
    /// exists: macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, and every
    /// other platform whose toolchain has the module.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    extension ObservableValue: Observation.Observable {}
#endif

extension ObservableValue {
    /// Makes ``value`` visible to Swift's Observation (`withObservationTracking`,
    /// SwiftUI): a read registers access, and sets announce the mutation
    /// from then on (see ``ValueObservation``). Where Observation does not
    /// exist, nothing.
    @inlinable @inline(__always)
    func registerAccess() {
        #if canImport(Observation)
            let registered = withExistingExtras { extras -> Bool in
                guard extras.isArmed else { return false }
                if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
                    // Borrowed, and called directly: the only watcher a
                    // value makes is this ValueObservation
                    // (`registerFirstAccess()`).
                    extras.watcher.withExisting { unsafeDowncast($0, to: ValueObservation.self).access() }
                }
                return true
            }
            if registered != true { registerFirstAccess() }
        #endif
    }

    /// The first read of ``value`` where Observation exists: makes the
    /// value's ``ValueObservation`` and registers the read with it.
    @usableFromInline
    func registerFirstAccess() {
        #if canImport(Observation)
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
                madeExtras.madeWatcher { ValueObservation() }.access()
            }
        #endif
    }
}
