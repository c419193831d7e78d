import Foundation
import ObserverSwift
import ObserverTestSupport
import XCTest

// What the Observable values guide's example prints and
// sets, checked with the same types; `print` is shadowed by a recorder. The
// guides' code itself is compiled by `make snippets`.

private final class ProfileViewModel {
    let name = ObservableValue("Ada")  // SwiftEvents' init(_:)
    let unread = ObservableValue(0, skipsDuplicates: true)
}

// A binding target is handed to whichever thread sets the value, so it is
// Sendable: this one keeps its texts behind a lock.
private final class ProfileView: @unchecked Sendable {
    // @unchecked: `texts` is only touched while `lock` is held.
    private let lock = NSLock()
    private var texts = (title: "", badge: "")
    var title: String {
        get { lock.withLock { texts.title } }
        set { lock.withLock { texts.title = newValue } }
    }
    var badge: String {
        get { lock.withLock { texts.badge } }
        set { lock.withLock { texts.badge = newValue } }
    }
}

final class ValueStreamExampleTests: XCTestCase {
    func testTourValue() {
        let printed = Received<String>()
        @Sendable func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        let model = ProfileViewModel()
        let view = ProfileView()

        // Bind a target: held weakly, handed back alive; replay: true sends the current value now.
        model.name.replaying.subscribe(view) { view, name in view.title = name }
        model.unread.subscribe(view) { view, count in view.badge = count == 0 ? "" : "\(count)" }
        XCTAssertEqual(view.title, "Ada")

        model.name.value = "Grace"  // view.title == "Grace"
        XCTAssertEqual(view.title, "Grace")
        model.unread.value = 3  // the operator sets too: view.badge == "3"
        XCTAssertEqual(view.badge, "3")
        model.unread.value = 3  // skipped: unchanged

        // The minimal recipe: closure observers and tokens.
        let token = model.unread.subscribe { count in print("unread:", count) }
        model.unread.value = 4  // prints "unread: 4"
        token.cancel()
        print(model.name.subscribersCount, model.unread.triggersCount)  // 1 2

        XCTAssertEqual(printed.values, ["unread: 4", "1 2"])
    }
}
