import ObserverEngine
import ObserverSwift

/// A base class whose instances can be observed through protocols
/// (Flowduino's `ObservableClass`): subclass it, define an observer
/// protocol, and call ``ProtocolObservable/withObservers(_:)`` wherever
/// observers should hear about a change.
///
/// <!-- snippet: fragment of DummyPrinter -->
/// ```swift
/// protocol DummyObserver: AnyObject {
///     func onFooChanged(oldValue: String, newValue: String)
/// }
/// class Dummy: ObservableClass {
///     private var _foo = "Hello"
///     var foo: String {
///         get { _foo }
///         set {
///             withObservers { (observer: DummyObserver) in
///                 observer.onFooChanged(oldValue: self._foo, newValue: newValue)
///             }
///             _foo = newValue
///         }
///     }
/// }
/// let dummy = Dummy()
/// dummy.addObserver(someDummyObserver)   // held weakly
/// dummy.foo = "Test 1"                   // calls onFooChanged
/// ```
///
/// Every method is thread-safe (so ObserverSwiftCompat's `ObservableThreadSafeClass` is the
/// same class); see ``ObserverRegistry`` for the exact guarantees. Classes
/// that cannot inherit hold an ``ObserverRegistry`` and adopt
/// ``ProtocolObservable`` instead.
open class ObservableClass: ProtocolObservable {
    /// First stored property: the word of the registry's reference (see
    /// `AtomicWord`). Nothing else: an object no observer was added to
    /// carries 8 bytes for being observable; the registry is made by the
    /// first `addObserver` (or the first read of ``observerRegistry``).
    @usableFromInline
    var registryStorage = AtomicWordStorage<UnsafeMutableRawPointer?>(nil)

    /// The registry (retained), or nil before it is first needed.
    @usableFromInline
    final var registryWord: AtomicWord<UnsafeMutableRawPointer?> { AtomicWords.first(self) }

    /// The registry holding this object's observers (made on first use).
    public final var observerRegistry: ObserverRegistry {
        registryWord.objectMadeOnFirstUse { ObserverRegistry() }
    }

    /// Calls `body` with the registry borrowed, or returns nil when no
    /// observer was ever added (nothing is made).
    @inlinable @inline(__always)
    final func withExistingRegistry<Result>(_ body: (ObserverRegistry) -> Result) -> Result? {
        // Acquire: pairs with the release that published the registry.
        guard let made = registryWord.load(ordering: .acquiring) else { return nil }
        return Unmanaged<ObserverRegistry>.fromOpaque(made)._withUnsafeGuaranteedRef(body)
    }

    /// Creates an observable with no observers. Not `required` (as in Flowduino): a
    /// subclass overrides it with `override init()` or declares its own.
    public init() {}

    deinit {
        registryWord.releaseObject(ObserverRegistry.self)
    }

    // The members below are `ProtocolObservable`'s, for an object that may
    // never have had an observer: they make no registry where there is
    // nothing to do. Final, as the extension's are: a member of an open
    // class that could be overridden would be called through the vtable,
    // unspecialized.

    /// Unregisters `observer`; false (a no-op) when it was not registered.
    @discardableResult
    public final func removeObserver(_ observer: AnyObject) -> Bool {
        withExistingRegistry { $0.removeObserver(observer) } ?? false
    }

    /// Unregisters every observer; returns how many were registered.
    @discardableResult
    public final func removeAllObservers() -> Int {
        withExistingRegistry { $0.removeAllObservers() } ?? 0
    }

    /// Registered observers still alive.
    public final var observerCount: Int { withExistingRegistry { $0.observerCount } ?? 0 }

    /// Calls `body` on this thread, before returning, with every observer
    /// conforming to `P` that can be called here and now (see
    /// ``ProtocolObservable/withObservers(_:)``).
    @inlinable
    public final func withObservers<P>(_ body: (P) -> Void) {
        // The registry borrowed: a strong reference to it would cost a
        // retain and a release per call.
        guard let made = registryWord.load(ordering: .acquiring) else { return }
        let notCalled = Unmanaged<ObserverRegistry>.fromOpaque(made)._withUnsafeGuaranteedRef {
            $0.withObserversCallableHere(body)
        }
        if notCalled > 0 {
            ObserversNotCalled.report(
                notCalled, spelling: "withObservers(_:)", escapingSpelling: "dispatchToObservers(_:)")
        }
    }

    /// Calls `body` with every observer conforming to `P`, each where its
    /// delivery says. See ``ObserverRegistry/withObservers(_:)``.
    @inlinable
    public final func dispatchToObservers<P>(_ body: @escaping @Sendable (P) -> Void) {
        guard let made = registryWord.load(ordering: .acquiring) else { return }
        Unmanaged<ObserverRegistry>.fromOpaque(made).takeUnretainedValue().withObservers(body)
    }
}
