import XCTest

@testable import ObserverSwift

extension ObserverRegistry {
    /// The non-escaping notifying call ObserverSwiftCompat's Flowduino
    /// spelling is made of, for the tests of synchronous behaviour (whose
    /// bodies count into local variables): fails the test when an observer
    /// could not be called here and now.
    func withObserversHere<P>(
        file: StaticString = #filePath, line: UInt = #line, _ body: (P) -> Void
    ) {
        let notCalled = withObserversCallableHere(body)
        XCTAssertEqual(notCalled, 0, "observers whose delivery needs a later call", file: file, line: line)
    }
}
