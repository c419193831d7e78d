import ObserverSwift

/// Flowduino's thread-safe variant of `ObservableClass`. Every ObserverSwift
/// observable is thread-safe and never blocks `addObserver` or
/// `removeObserver` behind a running `withObservers`, so this is the same
/// class.
public typealias ObservableThreadSafeClass = ObservableClass
