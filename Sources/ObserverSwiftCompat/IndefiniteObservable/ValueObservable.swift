import ObserverSwift

/// A stream of values observed with closures: the ready-made
/// ``IndefiniteObservable``.
///
/// ```swift
/// let greetings = ValueObservable<String> { observer in
///     observer.next("hello")
///     return noopDisconnect
/// }
/// let subscription = greetings.subscribe { print($0) }   // prints "hello"
/// ```
open class ValueObservable<T>: IndefiniteObservable<ValueObserver<T>> {
    /// Subscribes a closure; see ``IndefiniteObservable/subscribe(observer:)``.
    open func subscribe(_ next: @escaping @Sendable (T) -> Void) -> Subscription {
        subscribe(observer: ValueObserver(next))
    }
}

extension ValueObservable: @unchecked Sendable where T: Sendable {}
// @unchecked: the only state is the immutable connect closure. Subscribing
// from several threads runs it on each of them, so such a closure must be
// safe to run concurrently (a shared stream's is: see `share()`). Not
// declared on `IndefiniteObservable` itself, so that users' own subclasses
// (IndefiniteObservable's README) compile without a Sendable warning; a
// subclass of this class restates the conformance (the compiler asks).
