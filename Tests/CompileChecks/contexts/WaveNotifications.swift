// The notification names the notification fragments observe.
extension Notification.Name {
    static let wave = Notification.Name("wave")
    static let hello = Notification.Name("hello")
}
// fragment
