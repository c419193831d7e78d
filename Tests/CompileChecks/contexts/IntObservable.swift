// What a fragment on a subscription page assumes: a value stream of Int.
let observable = ValueObservable<Int> { observer in
    observer.next(1)
    return noopDisconnect
}
// fragment
