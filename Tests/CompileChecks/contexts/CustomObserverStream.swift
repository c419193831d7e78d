// An IndefiniteObservable with its own observer type, as the
// IndefiniteObservable example declares one.
final class MyObserver<T>: Observer, Sendable where T: Sendable {
    init(_ next: @escaping @Sendable (T) -> Void) { self.next = next }
    let next: @Sendable (T) -> Void
}
let stream = IndefiniteObservable<MyObserver<Int>> { observer in
    observer.next(1)
    return noopDisconnect
}
// fragment
