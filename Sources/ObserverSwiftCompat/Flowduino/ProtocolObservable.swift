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
    /// See ``ObserverRegistry/addObserver(_:delivery:)->Bool``.
    @discardableResult
    public func addObserver(_ observer: any AnyObject & Sendable, delivery: Delivery = .synchronous) -> Bool {
        observerRegistry.addObserver(observer, delivery: delivery)
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

    /// Calls `body` on this thread with every synchronous observer
    /// conforming to `P`, the type of the closure's parameter. See
    /// ``ObserverRegistry/withObservers(_:)``.
    ///
    /// <!-- snippet: fragment of ProtocolObservableMethod -->
    /// ```swift
    /// withObservers { (observer: TemperatureObserver) in
    ///     observer.temperatureChanged(to: 21.5)
    /// }
    /// ```
    @inlinable
    public func withObservers<P>(_ body: (P) -> Void) {
        observerRegistry.withObservers(body)
    }

    /// Calls `body` with every observer conforming to `P`, each where its
    /// delivery says. See ``ObserverRegistry/dispatchToObservers(_:)``.
    @inlinable
    public func dispatchToObservers<P>(_ body: @escaping @Sendable (P) -> Void) {
        observerRegistry.dispatchToObservers(body)
    }
}
