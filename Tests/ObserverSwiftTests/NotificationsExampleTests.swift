import Foundation
import Observation
import ObserverSwift
import XCTest

// What the Notifications and Key-path observation guides' examples print,
// checked with the same types: they are nested in an enum (to keep the test
// target's names apart) and `print` is redirected to a recorder. The guides'
// code itself is compiled by `make snippets`.
// The file also imports Swift's `Observation`: our names must not clash.

private let tourOutput = NotificationsSupport.Recorder<String>()

private func print(_ items: Any...) {
    tourOutput.append(items.map { "\($0)" }.joined(separator: " "))
}

extension Notification.Name {
    fileprivate static let wave = Notification.Name("wave")
    fileprivate static let hello = Notification.Name("hello")
}

private enum Tour {
    final class Watcher {
        let waveObserver: NotificationObserver

        init() {
            // queue: nil runs the handler on the posting thread, inside post.
            waveObserver = NotificationObserver(forName: .wave, queue: nil, activate: true) { note in
                print("wave from", note.object ?? "nobody")
            }
        }
    }

    // Sendable (no mutable state): the handler may run on any posting thread.
    final class ScreenController: HasObservers, Sendable {
        init() {
            NotificationObserver(forNames: [.wave, .hello], queue: nil) { [weak self] note in
                self?.show(note.name)
            }.add(to: self)
        }

        func show(_ name: Notification.Name) { print("screen:", name.rawValue) }
        func willAppear() { activateObservers() }
        func didDisappear() { deactivateObservers() }
    }

    final class Document: KeyPathObservable {
        @ObservableProperty var title = "Untitled"
        @ObservableProperty var pageCount = 0
    }

    /// Swift's own `@Observable` next to ours, unqualified.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Observable
    final class SwiftObservationModel {
        var count = 0
    }
}

final class NotificationsExampleTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        LeakSanitizerSupport.keepMainQueueSideTableReachable()
    }

    func testTourNotifications() {
        let start = tourOutput.count
        let watcher = Tour.Watcher()
        Notification.Name.wave.post()  // wave from nobody
        Notification.Name.wave.post(object: "Ada")  // wave from Ada
        watcher.waveObserver.deactivate()
        Notification.Name.wave.post()  // (nothing)
        watcher.waveObserver.activate()
        XCTAssertEqual(Array(tourOutput.all[start...]), ["wave from nobody", "wave from Ada"])
        watcher.waveObserver.deactivate()
    }

    func testTourNotificationGroups() {
        let start = tourOutput.count
        let screen = Tour.ScreenController()
        Notification.Name.hello.post()  // (nothing: the group starts inactive)
        screen.willAppear()
        Notification.Name.hello.post()  // screen: hello
        screen.didDisappear()
        Notification.Name.hello.post()
        XCTAssertEqual(Array(tourOutput.all[start...]), ["screen: hello"])
    }

    func testTourKeyPath() {
        let start = tourOutput.count
        let document = Tour.Document()
        let titleObserver = document.observe(\.$title) { old, new in
            print("title:", old, "→", new)
        }
        document.title = "Draft"  // title: Untitled → Draft
        titleObserver.deactivate()
        document.title = "Final"  // (nothing)
        titleObserver.activate()

        // Checked at compile time: the projected value's key path.
        let pagesObserver = document.observe(\.$pageCount) { old, new in
            print("pages:", old, "→", new)
        }
        document.$pageCount.modify { $0 += 1 }  // pages: 0 → 1 (atomic read-modify-write)
        XCTAssertEqual(Array(tourOutput.all[start...]), ["title: Untitled → Draft", "pages: 0 → 1"])
        withExtendedLifetime(pagesObserver) {}
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testSwiftObservationCoexists() {
        let model = Tour.SwiftObservationModel()
        let changed = NotificationsSupport.Recorder<Bool>()
        withObservationTracking {
            _ = model.count
        } onChange: {
            changed.append(true)
        }
        model.count = 1
        XCTAssertEqual(changed.count, 1)
    }
}
