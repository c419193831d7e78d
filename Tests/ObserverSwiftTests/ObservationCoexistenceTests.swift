// This file imports both Swift's Observation module and ObserverSwift and
// uses both with unqualified names: ObserverSwift declares no `Observable`.
import Observation
import ObserverSwift
import XCTest

@Observable
final class CoexistenceModel {
    var count = 0
}

private func isObservable<T: Observable>(_: T) -> Bool { true }

final class ObservationCoexistenceTests: XCTestCase {
    func testObservationAndObserverSwiftCompileTogetherUnqualified() {
        let model = CoexistenceModel()
        let value = ObservableValue(value: 0)
        let changes = ValueTestCounter()
        withObservationTracking {
            _ = model.count
        } onChange: {
            changes.increment()
        }
        value.addObserver { model.count = $0 }
        value <<< 3
        XCTAssertTrue(isObservable(model))
        XCTAssertEqual(model.count, 3)
        XCTAssertEqual(changes.value, 1)
    }
}
