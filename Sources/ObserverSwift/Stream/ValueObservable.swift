/// A stream of values observed with closures: the ready-made
/// ``IndefiniteObservable``.
///
/// ```swift
/// let greetings = ValueObservable<String> { observer in
///     observer.next("hello")
///     return noopDisconnect
/// }
/// greetings.subscribe { print($0) }   // prints "hello"
/// ```
open class ValueObservable<T>: IndefiniteObservable<ValueObserver<T>> {
    /// Subscribes a closure; see ``IndefiniteObservable/subscribe(observer:)``.
    @discardableResult
    open func subscribe(_ next: @escaping (T) -> Void) -> Subscription {
        subscribe(observer: ValueObserver(next))
    }
}
