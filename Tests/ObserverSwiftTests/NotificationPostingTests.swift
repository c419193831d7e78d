import Foundation
import ObserverSwift
import XCTest

final class NotificationPostingTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        LeakSanitizerSupport.keepMainQueueSideTableReachable()
    }

    typealias Recorder = NotificationsSupport.Recorder

    private func observe(
        _ name: Notification.Name, center: NotificationCenter = .default, into calls: Recorder<String>
    ) -> NotificationObserver {
        NotificationObserver(forName: name, queue: nil, center: center, activate: true) { note in
            let object = (note.object as? String) ?? "-"
            let info = (note.userInfo?["k"] as? Int).map(String.init) ?? "-"
            calls.append("\(object)/\(info)")
        }
    }

    func testNamePostDefaultsToTheDefaultCenterWithNoObject() {
        let name = NotificationsSupport.uniqueName()
        let calls = Recorder<String>()
        let observer = observe(name, into: calls)
        name.post()
        XCTAssertEqual(calls.all, ["-/-"])
        withExtendedLifetime(observer) {}
    }

    func testNamePostCarriesObjectAndUserInfo() {
        let name = NotificationsSupport.uniqueName()
        let calls = Recorder<String>()
        let observer = observe(name, into: calls)
        name.post(object: "sender", userInfo: ["k": 7])
        XCTAssertEqual(calls.all, ["sender/7"])
        withExtendedLifetime(observer) {}
    }

    func testNamePostToAnotherCenter() {
        let center = NotificationCenter()
        let name = NotificationsSupport.uniqueName()
        let calls = Recorder<String>()
        let onDefault = Recorder<String>()
        let observer = observe(name, center: center, into: calls)
        let defaultObserver = observe(name, into: onDefault)
        name.post(object: "x", center: center)
        XCTAssertEqual(calls.all, ["x/-"])
        XCTAssertEqual(onDefault.count, 0)
        withExtendedLifetime((observer, defaultObserver)) {}
    }

}
