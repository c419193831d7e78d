import Dispatch
import ObserverSwift

/// A type whose observers are called by protocol, through an
/// ``ObserverRegistry`` it holds: adopt it to get Flowduino's observer API
/// (`addObserver`, `removeObserver`, `withObservers`) without inheriting
/// from ``ObservableClass``.
///
/// <!-- snippet: fragment of TemperatureObservers -->
/// ```swift
/// final class Thermostat: SomeFrameworkBaseClass, ProtocolObservable {
///     let observerRegistry = ObserverRegistry()
///     var celsius = 20.0 {
///         didSet {
///             withObservers { (observer: TemperatureObserver) in
///                 observer.temperatureChanged(to: self.celsius)
///             }
///         }
///     }
/// }
/// ```
public protocol ProtocolObservable: AnyObject {
    /// The registry holding this object's observers.
    var observerRegistry: ObserverRegistry { get }
}

extension ProtocolObservable {
    /// Registers `observer`, held weakly; false when registered already.
    /// See ``ObserverRegistry/addObserver(_:delivery:fileID:line:)``.
    @discardableResult
    public func addObserver(_ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous) -> Bool {
        observerRegistry.insertObserver(observer, delivery: delivery)
    }

    /// Unregisters `observer`; false (a no-op) when it was not registered.
    @discardableResult
    public func removeObserver(_ observer: AnyObject) -> Bool {
        observerRegistry.removeObserver(observer)
    }

    /// Unregisters every observer; returns how many were registered.
    @discardableResult
    public func removeAllObservers() -> Int {
        observerRegistry.removeAllObservers()
    }

    /// Registered observers still alive.
    public var observerCount: Int { observerRegistry.observerCount }

    /// Calls `body` on this thread, before returning, with every observer
    /// conforming to `P`, the type of the closure's parameter (Flowduino's
    /// spelling: `body` does not escape, so it may use `self` implicitly).
    ///
    /// <!-- snippet: fragment of ProtocolObservableMethod -->
    /// ```swift
    /// withObservers { (observer: TemperatureObserver) in
    ///     observer.temperatureChanged(to: 21.5)
    /// }
    /// ```
    ///
    /// A non-escaping `body` can only run here and now, so an observer added
    /// with a queue or main-actor delivery (see
    /// ``ObserverRegistry/addObserver(_:delivery:fileID:line:)``) is reached by
    /// ``dispatchToObservers(_:)`` instead: this call does not call it, and
    /// the first time that happens in a process it says so on standard
    /// error. A main-actor observer is called here when this runs on the
    /// main actor.
    @inlinable
    public func withObservers<P>(_ body: (P) -> Void) {
        let notCalled = observerRegistry.withObserversCallableHere(body)
        if notCalled > 0 {
            ObserversNotCalled.report(
                notCalled, spelling: "withObservers(_:)", escapingSpelling: "dispatchToObservers(_:)")
        }
    }

    /// Calls `body` with every observer conforming to `P`, each where its
    /// delivery says. See ``ObserverRegistry/withObservers(_:)``.
    @inlinable
    public func dispatchToObservers<P>(_ body: @escaping @Sendable (P) -> Void) {
        observerRegistry.withObservers(body)
    }
}
