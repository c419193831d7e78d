import Foundation
import ObserverEngine

extension Notification.Name {
    /// Posts this notification (HSObserver's `Notif.myNotification.post()`).
    ///
    /// ```swift
    /// extension Notification.Name { static let wave = Notification.Name("wave") }
    /// Notification.Name.wave.post()
    /// let sender = NSObject()
    /// Notification.Name.wave.post(object: sender, userInfo: ["height": 3])
    /// ```
    ///
    /// - Parameters:
    ///   - object: the poster (default nil).
    ///   - userInfo: extra information (default nil).
    ///   - center: the center to post to (default `.default`).
    public func post(
        object: Any? = nil, userInfo: [AnyHashable: Any]? = nil, center: NotificationCenter = .default
    ) {
        center.post(name: self, object: object, userInfo: userInfo)
    }
}
