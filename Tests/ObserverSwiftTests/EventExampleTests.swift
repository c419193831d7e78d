import ObserverSwift
import XCTest

// What the Events guide's example states (counts, delivered values), checked
// with the same types. The guide's code itself is compiled by `make snippets`.

private final class Inbox {
    let didReceive = Event<String>()
    func deliver(_ message: String) { didReceive.send(message) }  // or .trigger(_:)
}

private final class InboxView {
    var lines: [String] = []
}

final class EventExampleTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        LeakSanitizerSupport.keepMainQueueSideTableReachable()
    }

    func testTour() throws {
        let inbox = Inbox()
        let view = InboxView()

        inbox.didReceive.subscribe(view) { view, message in view.lines.append(message) }
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
        inbox.didReceive.subscribeOnce { print("first:", $0) }
        inbox.didReceive.subscribe(limit: 3) { print($0) }
        inbox.didReceive.subscribe(view, queue: .main) { view, message in view.lines.append(message) }
        inbox.didReceive.subscribeOnMainActor { message in _ = message /* @MainActor code */ }
        try token.cancelAndWait()
        XCTAssertEqual(inbox.didReceive.subscribersCount, 5)
    }
}
