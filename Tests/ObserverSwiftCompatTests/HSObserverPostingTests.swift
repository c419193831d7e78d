import Foundation
import ObserverSwiftCompat
import ObserverTestSupport
import XCTest

/// HSObserver's README posts with `NotificationCenter.post(Watcher.Notif.wave)`:
/// a static `post(_:)` on NotificationCenter that posts to the default center.
final class HSObserverPostingTests: XCTestCase {
    private struct Notif {
        static let wave = NSNotification.Name("HSObserverPostingTests.wave")
        static let hello = NSNotification.Name("HSObserverPostingTests.hello")
    }

    private struct Posted: Equatable {
        let name: Notification.Name
        let object: String?
        let height: Int?
    }

    /// Everything posted to `center` under the two names, in order.
    private func record(on center: NotificationCenter) -> (observer: HSObserver, posted: SharedVariable<[Posted]>) {
        let posted = SharedVariable<[Posted]>([])
        let observer = HSObserver(forNames: [Notif.wave, Notif.hello], queue: nil, center: center, activate: true) {
            note in
            let entry = Posted(
                name: note.name, object: note.object as? String, height: note.userInfo?["height"] as? Int)
            posted.update { $0.append(entry) }
        }
        return (observer, posted)
    }

    func testPostsTheNameToTheDefaultCenterWithNoObjectAndNoUserInfo() {
        let (observer, posted) = record(on: .default)
        NotificationCenter.post(Notif.wave)
        XCTAssertEqual(posted.value, [Posted(name: Notif.wave, object: nil, height: nil)])
        withExtendedLifetime(observer) {}
    }

    func testPassesObjectAndUserInfoThrough() {
        let (observer, posted) = record(on: .default)
        NotificationCenter.post(Notif.hello, object: "surfer", userInfo: ["height": 3])
        NotificationCenter.post(Notif.wave, userInfo: ["height": 5])
        XCTAssertEqual(
            posted.value,
            [
                Posted(name: Notif.hello, object: "surfer", height: 3),
                Posted(name: Notif.wave, object: nil, height: 5),
            ])
        withExtendedLifetime(observer) {}
    }

    func testPostsToTheDefaultCenterOnly() {
        let other = NotificationCenter()
        let (observer, posted) = record(on: other)
        NotificationCenter.post(Notif.wave)
        XCTAssertEqual(posted.value, [])
        other.post(name: Notif.wave, object: nil)
        XCTAssertEqual(posted.value, [Posted(name: Notif.wave, object: nil, height: nil)])
        withExtendedLifetime(observer) {}
    }
}
