import ObserverSwift

/// Flowduino's thread-safe variant of `KeyedObservableClass`. Every
/// ObserverSwift observable is thread-safe and never blocks adds or removes
/// behind a running `withKeyedObservers`, so this is the same class.
public typealias KeyedObservableThreadSafeClass = KeyedObservableClass
