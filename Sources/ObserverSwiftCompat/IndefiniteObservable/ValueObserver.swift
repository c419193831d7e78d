/// An ``Observer`` that calls a closure: the ready-made observer of
/// ``ValueObservable``.
///
/// ```swift
/// let observer = ValueObserver<Int> { print($0) }
/// observer.next(3)   // prints 3
/// ```
public final class ValueObserver<T>: Observer, Sendable {
    /// The type of the values this observer receives.
    public typealias Value = T

    private let handler: @Sendable (T) -> Void

    /// Creates an observer calling `next` with each value.
    public init(_ next: @escaping @Sendable (T) -> Void) {
        self.handler = next
    }

    /// The closure, called on the producer's thread.
    public var next: (T) -> Void { handler }
}
