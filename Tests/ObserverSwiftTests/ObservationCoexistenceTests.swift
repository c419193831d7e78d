// This file imports both Swift's Observation module and ObserverSwift and
// uses both with unqualified names: ObserverSwift declares no `Observable`.
import Observation
import ObserverSwift
import ObserverTestSupport
import XCTest

@MainActor
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class CoexistenceModel {
    var count = 0
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
private func isObservable<T: Observable>(_: T) -> Bool { true }

final class ObservationCoexistenceTests: XCTestCase {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testObservationAndObserverSwiftCompileTogetherUnqualified() {
        // XCTest runs tests on the main thread (a `@MainActor` test method
        // is not callable by XCTest on Linux).
        MainActor.assumeIsolated {
            let model = CoexistenceModel()
            let value = ObservableValue(0)
            let changes = LockedCounter()
            withObservationTracking {
                _ = model.count
            } onChange: {
                changes.increment()
            }
            // Set on the main thread: the main-actor observer runs synchronously.
            let observer = value.subscribe { @MainActor count in model.count = count }
            value.value = 3
            XCTAssertTrue(isObservable(model))
            XCTAssertEqual(model.count, 3)
            XCTAssertEqual(changes.value, 1)
            observer.cancel()
        }
    }
}
