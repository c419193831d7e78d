import Foundation
import ObserverSwiftCompat
import ObserverTestSupport
import XCTest

/// A binding target recording the texts handed to it, from any thread.
private final class Label: Sendable {
    let texts = Received<String>()
}

/// SwiftEvents' `Observable` and the minimal `Observable<T>` recipe, spelled
/// as they were, over `ObservableValue`.
final class ValueSpellingTests: XCTestCase {
    func testRecipeInitializersAndTheAssignmentOperator() {
        let number = ObservableValue(value: 1)
        let mode = ObservableValue(value: "light", skipsDuplicates: true)
        let seen = Received<Int>()
        let modes = Received<String>()
        let token = number.addObserver { seen.append($0) }
        let modeToken = mode.addObserver { modes.append($0) }
        number <<< 5
        number <<< number.value + 1  // assignment precedence: no parentheses needed
        mode <<< "light"
        mode <<< "dark"
        XCTAssertEqual(seen.values, [5, 6])
        XCTAssertEqual(modes.values, ["dark"])
        XCTAssertTrue(number.removeObserver(token))
        XCTAssertTrue(mode.removeObserver(modeToken))
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

    func testUnbindAllRemovesBindingsButKeepsAddedObservers() {
        let number = ObservableValue(0)
        let label = Label()
        let added = Received<Int>()
        number.bind(label) { label, value in label.texts.append("\(value)") }
        let observer = number.addObserver { added.append($0) }
        XCTAssertEqual(number.unbindAll(), 1)
        number.value = 1
        XCTAssertEqual(label.texts.values, [])
        XCTAssertEqual(added.values, [1])
        XCTAssertEqual(number.observersCount, 1)
        withExtendedLifetime(observer) {}
    }

    func testRemoveObserverIgnoresAForeignToken() {
        let number = ObservableValue(0)
        let other = ObservableValue(0)
        let otherSeen = Received<Int>()
        let foreign = other.addObserver { otherSeen.append($0) }
        XCTAssertFalse(number.removeObserver(foreign))
        other.value = 1
        XCTAssertEqual(otherSeen.values, [1], "the foreign observer must survive")
        XCTAssertTrue(foreign.isActive)
        XCTAssertTrue(other.removeObserver(foreign))
        XCTAssertFalse(other.removeObserver(foreign), "a second removal is a no-op")
    }

    func testRemoveObserverWithoutArgumentRemovesAddedObserversButNotBindings() {
        let number = ObservableValue(0)
        let label = Label()
        let added = LockedCounter()
        _ = number.addObserver { _ in added.increment() }  // both removed by removeObserver()
        _ = number.addObserver { _ in added.increment() }
        number.bind(label) { label, value in label.texts.append("\(value)") }
        XCTAssertEqual(number.removeObserver(), 2)
        number.value = 1
        XCTAssertEqual(added.value, 0)
        XCTAssertEqual(label.texts.values, ["1"])
        XCTAssertEqual(number.removeObserver(), 0)
        XCTAssertEqual(number.removeAllObservers(), 1)
        XCTAssertEqual(number.observersCount, 0)
    }
}
