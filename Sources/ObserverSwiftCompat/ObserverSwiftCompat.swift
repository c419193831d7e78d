// The seed libraries' spellings over ObserverSwift: SwiftEvents 1 and 2
// (`Observable`, `trigger`, `notify`, `addSubscriber`, `EventTS`,
// `ObservableTS`, ...), the minimal `Observable<T>(value:)` recipe
// (`addObserver(fireNow:_:)`, `removeObserver()`),
// Flowduino Observable (`ObservableThreadSafeClass`, ...), material-motion's
// IndefiniteObservable (`Observer` with its `next` property,
// `IndefiniteObservable`, `Disconnect`, `noopDisconnect`, `unsubscribe()`)
// and HSObserver (`HSObserver`, `HSHasObservers`, `HSObserves`).
//
// Migrating from one of them: `import ObserverSwiftCompat` instead of the
// seed's module, plus the renames the migration guides list. Everything of
// ObserverSwift comes with it, so code may move to the canonical spellings
// one call at a time.
@_exported import ObserverSwift
