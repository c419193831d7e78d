// A fragment that subscribes `self` with SwiftEvents 2's form runs in a
// method of a Sendable screen.
final class DownloadModel: Sendable {
    let didDownload = Event<String>()
}
final class DownloadScreen: Sendable {
    let model = DownloadModel()
    func show(_ image: String) { print(image) }
    func start() {
        // fragment
    }
}
