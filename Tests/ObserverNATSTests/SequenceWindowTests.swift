import XCTest

@testable import ObserverNATS

/// The receiver-side record of delivered sequence numbers (at-least-once de-duplication).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class SequenceWindowTests: XCTestCase {
    func testEveryNumberIsAcceptedOnceInAnyOrderAndHolesCostOneRangeEach() {
        var generator = SystemRandomNumberGenerator()
        for start in [UInt64(1), 1_000_000] {
            var window = SequenceWindow()
            var numbers = Array(start..<start + 5_000)
            numbers.shuffle(using: &generator)
            // Every number twice, the copies in another random order.
            let copies = numbers.shuffled(using: &generator)
            var accepted = 0
            var rejected = 0
            for (number, copy) in zip(numbers, copies) {
                if window.insert(number) { accepted += 1 } else { rejected += 1 }
                if window.insert(copy) { accepted += 1 } else { rejected += 1 }
            }
            XCTAssertEqual(accepted, 5_000)
            XCTAssertEqual(rejected, 5_000)
            XCTAssertEqual(window.ranges, [start...start + 4_999])
        }
        var window = SequenceWindow()
        for number in [10, 12, 14, 11] as [UInt64] { XCTAssertTrue(window.insert(number)) }
        XCTAssertEqual(window.ranges, [10...12, 14...14])
        XCTAssertFalse(window.insert(12))
        XCTAssertTrue(window.insert(13))
        XCTAssertEqual(window.ranges, [10...14])
        XCTAssertTrue(window.insert(3))
        XCTAssertEqual(window.ranges, [3...3, 10...14])
    }
}
