import Foundation
import ObserverSwift

extension NotificationObserver {
    /// HSObserver's spelling of `center`.
    public var centre: NotificationCenter { center }

    /// The first observed name (HSObserver's `name`; ObserverSwift's is
    /// `names`).
    public var name: Notification.Name? { names.first }
}

extension NotificationCenter {
    /// HSObserver's spelling: `NotificationCenter.post(name: .wave)` posts to
    /// the default center (ObserverSwift's: `Notification.Name.wave.post()`).
    public static func post(name: Notification.Name, object: Any? = nil, userInfo: [AnyHashable: Any]? = nil) {
        NotificationCenter.default.post(name: name, object: object, userInfo: userInfo)
    }

    /// HSObserver's README spelling: `NotificationCenter.post(Watcher.Notif.wave)`
    /// posts to the default center (ObserverSwift's: `Watcher.Notif.wave.post()`).
    public static func post(_ name: Notification.Name, object: Any? = nil, userInfo: [AnyHashable: Any]? = nil) {
        name.post(object: object, userInfo: userInfo)
    }
}

extension HasObservers {
    /// HSObserver's spelling of `observer.add(to: self)`: adds `observer` to
    /// this object's group, unchanged in state (an inactive observer stays
    /// inactive until `activateObservers()`).
    public func add(observer: any Observes) {
        observer.add(to: self)
    }

    /// Adds several observers to this object's group.
    public func add(observers: [any Observes]) {
        for observer in observers { observer.add(to: self) }
    }
}
