import Foundation
import ObserverSwiftCompat
import ObserverTestSupport
import XCTest

/// A binding target recording the texts handed to it, from any thread.
private final class Label: Sendable {
    let texts = Received<String>()
}

/// SwiftEvents' `Observable`, spelled as it was, over `ObservableValue` (the
/// recipe's `addObserver` and `removeObserver()`: `ObservableRecipeTests`).
final class ValueSpellingTests: XCTestCase {
    func testObservableIsObservableValueUnderTheSeedsName() {
        let number: Observable<Int> = Observable(1)  // SwiftEvents' initializer
        let mode = Observable(value: "light", skipsDuplicates: true)  // the recipe's label
        XCTAssertTrue(type(of: number) == ObservableValue<Int>.self)
        let seen = Received<Int>()
        let modes = Received<String>()
        let token = number.subscribe { seen.append($0) }
        let modeToken = mode.subscribe { modes.append($0) }
        number <<< 5
        number <<< number.value + 1  // assignment precedence: no parentheses needed
        mode <<< "light"
        mode <<< "dark"
        XCTAssertEqual(seen.values, [5, 6])
        XCTAssertEqual(modes.values, ["dark"])
        token.cancel()
        modeToken.cancel()
    }

    func testBindUnbindAndObserversCount() {
        let title = ObservableValue("")
        let label = Label()
        let other = Label()
        title.bind(label) { label, text in label.texts.append(text) }
        title.bind(other, replay: true) { text in other.texts.append("value-only " + text) }
        title.bind(label, queue: nil) { label, text in label.texts.append("queued " + text) }
        XCTAssertEqual(title.observersCount, 3)
        title.value = "a"
        XCTAssertEqual(title.unbind(label), 2)
        title.value = "b"
        XCTAssertEqual(label.texts.values, ["a", "queued a"])
        XCTAssertEqual(other.texts.values, ["value-only ", "value-only a", "value-only b"])
    }

    func testUnbindAllRemovesBindingsButKeepsClosureSubscriptions() {
        let number = Observable(0)
        let label = Label()
        let added = Received<Int>()
        number.bind(label) { label, value in label.texts.append("\(value)") }
        let observer = number.subscribe { added.append($0) }
        XCTAssertEqual(number.unbindAll(), 1)
        number.value = 1
        XCTAssertEqual(label.texts.values, [])
        XCTAssertEqual(added.values, [1])
        XCTAssertEqual(number.observersCount, 1)
        observer.cancel()
    }
}
