// Observers and waits of the protocol-typed and thread tests here (the same
// helpers as ObserverSwiftTests/Support: test targets cannot share sources).
import Foundation
import ObserverSwiftCompat
import XCTest

protocol AlphaObserver: AnyObject {
    func alpha(_ value: Int)
}

/// Records every call it receives, thread-safely.
final class AlphaOnly: AlphaObserver, @unchecked Sendable {
    // @unchecked: all state is in SharedVariable.
    let name: String
    let calls = SharedVariable<[String]>([])

    init(_ name: String) { self.name = name }

    func alpha(_ value: Int) { calls.update { $0.append("alpha \(value)") } }

    var recorded: [String] { calls.value }
    var callCount: Int { calls.value.count }
}

extension XCTestCase {
    /// Waits like `wait(for:timeout:)` and fails the test when an
    /// expectation is not fulfilled in time, through an `XCTWaiter` without
    /// delegate (which LeakSanitizer does not report; see
    /// ObserverSwiftTests/Support/LeakSanitizerSupport.swift).
    func waitUntilFulfilled(
        _ expectations: [XCTestExpectation], timeout: TimeInterval,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let result = XCTWaiter().wait(for: expectations, timeout: timeout)
        XCTAssertEqual(result, .completed, "waiting for \(expectations)", file: file, line: line)
    }
}
