// A fragment that observes `profile` and adds the observer to `self` runs in
// a method of a HasObservers owner.
final class Profile: KeyPathObservable {
    @ObservableProperty var name = "Ada"
}
final class ProfileScreen: HasObservers {
    func watch(_ profile: Profile) {
        // fragment
    }
}
