import Foundation
import ObserverSwiftCompat
import ObserverTestSupport
import XCTest

// What the Producer streams guide's example prints, checked with the same
// types; `print` is shadowed by a recorder. The guide's code itself is
// compiled by `make snippets`.

final class StreamExampleTests: XCTestCase {
    func testTourStream() {
        let printed = Received<String>()
        @Sendable func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        // A callback API to wrap (an Event stands for it here).
        let clicks = Event<Int>()

        let clickStream = ValueObservable<Int> { observer in
            observer.next(0)  // sent while connecting: delivered
            let token = clicks.subscribe { observer.next($0) }
            return { token.cancel() }  // the Disconnect
        }

        let subscription = clickStream.subscribe { value in print("click", value) }  // prints "click 0"
        clicks.send(1)  // prints "click 1"
        subscription.unsubscribe()  // disconnects, exactly once
        subscription.unsubscribe()  // no-op
        XCTAssertEqual(clicks.subscribersCount, 0)

        // One connection for many subscribers: connects on the first, disconnects after the last.
        let shared = clickStream.share()
        let a = shared.subscribe { print("a", $0) }  // connects: prints "a 0"
        let b = shared.subscribe { print("b", $0) }  // joins the running connection
        XCTAssertEqual(clicks.subscribersCount, 1)
        clicks.send(2)  // prints "a 2", "b 2"
        a.unsubscribe()
        b.unsubscribe()  // the last one out disconnects

        XCTAssertEqual(clicks.subscribersCount, 0)
        XCTAssertEqual(printed.values, ["click 0", "click 1", "a 0", "a 2", "b 2"])
    }
}
