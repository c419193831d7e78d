/// Receives the values of an ``IndefiniteObservable`` stream:
/// IndefiniteObservable's `Observer`, with its requirement as written there,
/// a `next` closure property (a `let next` satisfies it).
///
/// ```swift
/// final class PrintingObserver: Observer {
///     let next: (Int) -> Void = { print($0) }
/// }
/// ```
///
/// `next` is called on whatever thread the producer sends from.
///
/// ObserverSwift itself has no protocol of this name: its observers are
/// closures, weak targets and conformances to the user's own protocols.
public protocol Observer {
    /// The type of the values received.
    associatedtype Value
    /// Receives one value.
    var next: (Value) -> Void { get }
}
