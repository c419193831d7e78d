import Foundation
import ObserverSwift

/// One upstream connection shared by many subscribers: connects on the first
/// subscriber, fans values out through the core (an ``Event``, so one slot
/// list), disconnects when the last subscriber leaves, and connects again for
/// the next first subscriber.
///
/// No lock is held while user code runs (connect, disconnect, observers), so
/// observers may subscribe and unsubscribe from inside a delivery, also
/// during the first connect.
final class SharedConnection<O: Observer & Sendable>: @unchecked Sendable where O.Value: Sendable {
    // @unchecked: `subscribers` and `upstreamSubscription` are guarded by
    // `lock`; the fan-out list is internally synchronized.

    private let upstream: IndefiniteObservable<O>
    private let makeForwarder: (@escaping @Sendable (O.Value) -> Void) -> O
    private let fanOut = Event<O.Value>()
    private let lock = NSLock()
    private var subscribers = 0
    private var upstreamSubscription: Subscription?

    init(upstream: IndefiniteObservable<O>, makeForwarder: @escaping (@escaping @Sendable (O.Value) -> Void) -> O) {
        self.upstream = upstream
        self.makeForwarder = makeForwarder
    }

    /// The shared stream's connect closure: adds `observer` to the fan-out,
    /// connecting upstream when it is the first.
    func connect(_ observer: O) -> Disconnect {
        // Added before connecting, so values sent during connect reach it.
        let fanOutSubscription = fanOut.subscribe { observer.next($0) }
        lock.lock()
        subscribers += 1
        let isFirst = subscribers == 1
        lock.unlock()
        if isFirst {
            let fanOut = fanOut
            let subscription = upstream.subscribe(observer: makeForwarder { fanOut.send($0) })
            // The count cannot drop to zero before this: it includes this
            // subscriber, whose disconnect exists only once we return.
            lock.lock()
            upstreamSubscription = subscription
            lock.unlock()
        }
        return { [self] in
            fanOutSubscription.cancel()
            leave()
        }
    }

    /// One subscriber left; the last one disconnects upstream (outside the
    /// lock: the disconnect is user code).
    private func leave() {
        lock.lock()
        subscribers -= 1
        var last: Subscription?
        if subscribers == 0 {
            last = upstreamSubscription
            upstreamSubscription = nil
        }
        lock.unlock()
        last?.unsubscribe()
    }
}
