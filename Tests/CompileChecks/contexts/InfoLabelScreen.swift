// A fragment that binds `self` with SwiftEvents 2's form runs in a method of
// a Sendable screen.
final class ViewModel: Sendable {
    let infoLabel = ObservableValue("")
}
final class InfoScreen: Sendable {
    let viewModel = ViewModel()
    func updateInfoLabel(_ text: String) { print(text) }
    func start() {
        // fragment
    }
}
