import Foundation
import XCTest

extension XCTestCase {
    /// Waits like `wait(for:timeout:)` and fails the test when an
    /// expectation is not fulfilled in time, but through an `XCTWaiter`
    /// without delegate. `XCTestCase.wait` weakly references the test case,
    /// which XCTest keeps alive until exit; a weakly referenced object owns a
    /// side table whose address the runtime keeps tagged in the object's
    /// refcount word, where LeakSanitizer cannot see it, so `make asan` would
    /// report that side table as a leak.
    public func waitUntilFulfilled(
        _ expectations: [XCTestExpectation], timeout: TimeInterval,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let result = XCTWaiter().wait(for: expectations, timeout: timeout)
        XCTAssertEqual(result, .completed, "waiting for \(expectations)", file: file, line: line)
    }
}
