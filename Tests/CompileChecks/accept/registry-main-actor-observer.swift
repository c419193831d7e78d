// A main-actor observer of a protocol-typed registry: its conformance is
// isolated (the fix Swift 6 suggests), and every withObservers, from any
// thread, calls it on the main actor.
import ObserverSwift

protocol DownloadObserver: AnyObject {
    func downloaded(_ bytes: Int)
}

@MainActor
final class DownloadScreen {
    var total = 0
}

extension DownloadScreen: @MainActor DownloadObserver {
    func downloaded(_ bytes: Int) { total += bytes }
}

final class Downloader: Sendable {
    let observers = ObserverRegistry()
    func finished(_ bytes: Int) {
        observers.withObservers { (observer: DownloadObserver) in observer.downloaded(bytes) }
    }
}

@MainActor
func show(_ downloader: Downloader) -> DownloadScreen {
    let screen = DownloadScreen()
    downloader.observers.addObserver(screen)
    return screen
}
