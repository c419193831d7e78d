import ObserverSwift

/// SwiftEvents 2's thread-safe `EventTS`: ObserverSwift's ``Event`` is
/// thread-safe (subscribe, send and unsubscribe from any thread), so it is
/// the same class.
public typealias EventTS<T> = Event<T>

/// SwiftEvents 2's thread-safe `ObservableTS`: ObserverSwift's
/// ``ObservableValue`` is thread-safe (reads, sets and binds from any
/// thread), so it is the same class.
public typealias ObservableTS<T> = ObservableValue<T>
