/// An ``Observer`` that calls a closure: the ready-made observer of
/// ``ValueObservable``.
///
/// ```swift
/// let observer = ValueObserver<Int> { print($0) }
/// observer.next(3)   // prints 3
/// ```
public final class ValueObserver<T>: Observer {
    /// The type of the values this observer receives.
    public typealias Value = T

    private let handler: (T) -> Void

    /// Creates an observer calling `next` with each value.
    public init(_ next: @escaping (T) -> Void) {
        self.handler = next
    }

    /// Calls the closure, on the producer's thread.
    public func next(_ value: T) {
        handler(value)
    }
}

extension ValueObserver: @unchecked Sendable where T: Sendable {}
// @unchecked: the only state is an immutable closure; calling it on the
// producer's thread is the documented contract (as for every handler).
