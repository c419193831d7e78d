import ObserverSwift

/// HSObserver's name of ``NotificationObserver`` (same initializer labels
/// and defaults).
public typealias HSObserver = NotificationObserver

/// HSObserver's name of ``HasObservers``. Like HSObserver's, its extension
/// provides `observers`, `add(observer:)`, `activateObservers()` and
/// `deactivateObservers()`: a conforming class declares nothing.
public typealias HSHasObservers = HasObservers

/// HSObserver's name of ``Observes``.
public typealias HSObserves = Observes
