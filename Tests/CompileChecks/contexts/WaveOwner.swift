// A fragment that adds an observer to `self` runs in a method of a
// HasObservers owner.
extension Notification.Name {
    static let wave = Notification.Name("wave")
}
final class Beach: HasObservers {
    func watch() {
        // fragment
    }
}
