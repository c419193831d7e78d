import Foundation
import ObserverSwift

extension NotificationObserver {
    /// HSObserver's spelling of `center`.
    public var centre: NotificationCenter { center }
}

extension NotificationCenter {
    /// HSObserver's spelling: `NotificationCenter.post(name: .wave)` posts to
    /// the default center (ObserverSwift's: `Notification.Name.wave.post()`).
    public static func post(name: Notification.Name, object: Any? = nil, userInfo: [AnyHashable: Any]? = nil) {
        NotificationCenter.default.post(name: name, object: object, userInfo: userInfo)
    }
}
