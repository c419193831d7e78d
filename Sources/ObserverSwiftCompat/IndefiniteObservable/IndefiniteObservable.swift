import ObserverSwift

/// A stream of values with no completion and no failure, produced on demand
/// (material-motion's IndefiniteObservable, same names).
///
/// The connect closure runs once per subscription, with that subscription's
/// observer; it starts producing and returns how to stop. Each subscription
/// therefore connects its own producer; use ``share(makeObserver:)`` (or
/// `share()` on value streams) to share one connection among subscribers.
///
/// ```swift
/// let numbers = ValueObservable<Int> { observer in
///     observer.next(1)               // sent during connect: delivered
///     observer.next(2)
///     return noopDisconnect
/// }
/// let subscription = numbers.subscribe { print($0) }   // prints 1, 2
/// subscription.unsubscribe()
/// ```
///
/// Subclass it with your own observer type exactly as IndefiniteObservable's
/// README does:
///
/// ```swift
/// final class MyObserver<T>: Observer {
///     init(_ next: @escaping (T) -> Void) { self.next = next }
///     let next: (T) -> Void
/// }
/// final class MyObservable<T>: IndefiniteObservable<MyObserver<T>> {
///     func subscribe(_ next: @escaping (T) -> Void) -> Subscription {
///         return super.subscribe(observer: MyObserver(next))
///     }
/// }
/// ```
///
/// Threading: `subscribe(observer:)` runs the connect closure on the calling
/// thread; observers are called on whatever thread the producer sends from;
/// the disconnect runs on the thread that unsubscribes.
open class IndefiniteObservable<O: Observer> {
    /// The closure that connects one observer to the producer.
    public typealias Connect = (O) -> Disconnect

    private let connect: Connect

    /// Creates a stream; `connect` runs on each ``subscribe(observer:)``.
    public init(_ connect: @escaping (O) -> Disconnect) {
        self.connect = connect
    }

    /// Connects `observer` to the producer; values the producer sends
    /// synchronously while connecting reach it too.
    ///
    /// - Returns: the subscription. `unsubscribe()` (or `cancel()`) calls the
    ///   producer's disconnect exactly once. Dropping it does not
    ///   disconnect: keep it, or store it in a ``SubscriptionBag``.
    @discardableResult
    public final func subscribe(observer: O) -> Subscription {
        Subscription(canceller: Disconnection(connect(observer)))
    }
}
