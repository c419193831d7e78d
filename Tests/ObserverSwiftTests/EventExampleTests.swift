import Foundation
import ObserverSwift
import XCTest

// What the Events guide's example states (counts, delivered values), checked
// with the same types. The guide's code itself is compiled by `make snippets`.

private final class Inbox {
    let didReceive = Event<String>()
    func deliver(_ message: String) { didReceive.send(message) }  // or .trigger(_:)
}

// A target is handed to whichever thread sends, so it is Sendable: this one
// keeps its lines behind a lock.
private final class InboxView: @unchecked Sendable {
    // @unchecked: `shown` is only touched while `lock` is held.
    private let lock = NSLock()
    private var shown: [String] = []
    var lines: [String] { lock.withLock { shown } }
    func show(_ line: String) { lock.withLock { shown.append(line) } }
}

final class EventExampleTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        LeakSanitizerSupport.keepMainQueueSideTableReachable()
    }

    func testTour() throws {
        let inbox = Inbox()
        let view = InboxView()

        inbox.didReceive.subscribe(view) { view, message in view.show(message) }
        let token = inbox.didReceive.subscribe { message in print("got", message) }

        inbox.deliver("hello")
        XCTAssertEqual(inbox.didReceive.subscribersCount, 2)
        XCTAssertEqual(inbox.didReceive.triggersCount, 1)
        XCTAssertEqual(view.lines, ["hello"])
        token.cancel()
        inbox.didReceive.unsubscribe(view)
        XCTAssertEqual(inbox.didReceive.subscribersCount, 0)

        let bag = SubscriptionBag()
        inbox.didReceive.subscribe { print($0) }.store(in: bag)
        _ = inbox.didReceive.subscribe(limit: 1) { print("first:", $0) }
        _ = inbox.didReceive.subscribe(limit: 3) { print($0) }
        inbox.didReceive.subscribe(view, delivery: .queue(.main)) { view, message in view.show(message) }
        inbox.didReceive.subscribe { @MainActor message in _ = message /* @MainActor code */ }.store(in: bag)
        try token.cancelAndWait()
        XCTAssertEqual(inbox.didReceive.subscribersCount, 5)
    }
}
