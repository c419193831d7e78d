/// Receives the values of an ``IndefiniteObservable`` stream
/// (IndefiniteObservable's `Observer`).
///
/// ```swift
/// final class PrintingObserver: Observer {
///     func next(_ value: Int) { print(value) }
/// }
/// ```
///
/// `next` is called on whatever thread the producer sends from.
public protocol Observer {
    /// The type of the values received.
    associatedtype Value
    /// Receives one value.
    func next(_ value: Value)
}
