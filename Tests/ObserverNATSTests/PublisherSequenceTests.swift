import XCTest

@testable import ObserverNATS

/// What an import remembers per publisher: checked sequence arithmetic, bounded and expiring
/// per-publisher state, and the de-duplication window's cost (no server needed).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class PublisherSequenceTests: XCTestCase {
    func testSequenceNumbersAPublisherNeverSendsAreMalformedAndNeverTrap() {
        var gaps = GapTracker()
        // 1 then UInt64.max: the gap would not fit in an Int.
        XCTAssertEqual(gaps.record(publisher: 9, sequence: 1, now: 0), .deliver)
        XCTAssertEqual(gaps.record(publisher: 9, sequence: .max, now: 0), .malformed)
        XCTAssertEqual(gaps.record(publisher: 9, sequence: 2, now: 0), .deliver)
        // UInt64.max first, then 7: `last + 1` would overflow.
        XCTAssertEqual(gaps.record(publisher: 10, sequence: .max, now: 0), .malformed)
        XCTAssertEqual(gaps.record(publisher: 10, sequence: 7, now: 0), .deliver)
        XCTAssertEqual(gaps.record(publisher: 10, sequence: 0, now: 0), .malformed)
        // The largest jump a publisher can make is reported exactly.
        XCTAssertEqual(gaps.record(publisher: 11, sequence: 1, now: 0), .deliver)
        XCTAssertEqual(gaps.record(publisher: 11, sequence: UInt64(Int64.max), now: 0), .gap(missed: Int.max - 2))
        XCTAssertEqual(gaps.record(publisher: 11, sequence: UInt64(Int64.max) + 1, now: 0), .malformed)
        XCTAssertEqual(gaps.record(publisher: 11, sequence: 5, now: 0), .deliver)

        var filter = DuplicateFilter()
        // At-least-once UInt64.max then 0: building the range `UInt64.max...0` trapped.
        XCTAssertEqual(filter.record(publisher: 9, sequence: .max, now: 0), .malformed)
        XCTAssertEqual(filter.record(publisher: 9, sequence: 0, now: 0), .malformed)
        XCTAssertEqual(filter.record(publisher: 9, sequence: UInt64(Int64.max), now: 0), .deliver)
        XCTAssertEqual(filter.record(publisher: 9, sequence: 1, now: 0), .deliver)
        XCTAssertEqual(filter.record(publisher: 9, sequence: UInt64(Int64.max), now: 0), .duplicate)

        // The window itself takes any UInt64, the extremes included.
        var window = SequenceWindow()
        for number: UInt64 in [.max, 0, .max - 1, 1, .max, 0, 2, .max - 2] { _ = window.insert(number) }
        XCTAssertEqual(window.ranges, [0...2, UInt64.max - 2...UInt64.max])
    }

    func testPublishersAreBoundedInCountAndForgottenWhenIdle() {
        var gaps = GapTracker(limits: PublisherLimits(capacity: 3, idleExpiry: 100))
        for publisher: UInt64 in 1...3 {
            XCTAssertEqual(gaps.record(publisher: publisher, sequence: 1, now: 0), .deliver)
        }
        // Publisher 1 seen again: 2 is now the least recently seen, and goes to make room for 4.
        XCTAssertEqual(gaps.record(publisher: 1, sequence: 3, now: 10), .gap(missed: 1))
        XCTAssertEqual(gaps.record(publisher: 4, sequence: 1, now: 20), .deliver)
        XCTAssertEqual(gaps.table.count, 3)
        XCTAssertEqual(gaps.table.forgotten, 1)
        // Forgotten: its next frame starts afresh, no gap.
        XCTAssertEqual(gaps.record(publisher: 2, sequence: 9, now: 30), .deliver)
        XCTAssertEqual(gaps.table.forgotten, 2)
        XCTAssertEqual(gaps.record(publisher: 1, sequence: 5, now: 40), .gap(missed: 1))
        // 100 ns later than its last frame (at 30), 4 and 2 are expired; 1 (seen at 40) stays.
        XCTAssertEqual(gaps.record(publisher: 1, sequence: 6, now: 135), .deliver)
        XCTAssertEqual(gaps.table.count, 1)
        XCTAssertEqual(gaps.table.forgotten, 4)
        XCTAssertEqual(gaps.record(publisher: 1, sequence: 8, now: 136), .gap(missed: 1))
        XCTAssertEqual(gaps.record(publisher: 1, sequence: 10, now: 1_000), .deliver)
        XCTAssertEqual(gaps.table.count, 1)

        // A stream of new identities (a hostile peer, or publishers restarting): the table never
        // holds more than its capacity, and every identity beyond it is counted as forgotten.
        var filter = DuplicateFilter(limits: PublisherLimits(capacity: 1_000, idleExpiry: .max))
        for publisher in 1...100_000 as ClosedRange<UInt64> {
            XCTAssertEqual(filter.record(publisher: publisher, sequence: publisher, now: publisher), .deliver)
        }
        XCTAssertEqual(filter.table.count, 1_000)
        XCTAssertEqual(filter.table.forgotten, 99_000)
        XCTAssertEqual(filter.record(publisher: 100_000, sequence: 100_000, now: 0), .duplicate)
    }

    func testTableAgreesWithAModelOfRecencyAndExpiry() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let capacity = Int.random(in: 1...8, using: &generator)
            let expiry = UInt64.random(in: 1...50, using: &generator)
            var gaps = GapTracker(limits: PublisherLimits(capacity: capacity, idleExpiry: expiry))
            // The model: publisher -> highest number, time and order of its last frame.
            var model: [UInt64: (highest: UInt64, seen: UInt64, order: Int)] = [:]
            var forgotten = 0
            var now: UInt64 = 0
            for order in 0..<2_000 {
                now += UInt64.random(in: 0...5, using: &generator)
                let publisher = UInt64.random(in: 1...12, using: &generator)
                let sequence = UInt64.random(in: 1...40, using: &generator)
                let live = model.filter { now - $0.value.seen <= expiry }
                forgotten += model.count - live.count
                model = live
                let expected: FrameVerdict
                if let entry = model[publisher] {
                    let missed = sequence > entry.highest ? Int(sequence - entry.highest) - 1 : 0
                    expected = missed > 0 ? .gap(missed: missed) : .deliver
                    model[publisher] = (max(entry.highest, sequence), now, order)
                } else {
                    if model.count >= capacity, let oldest = model.min(by: { $0.value.order < $1.value.order }) {
                        model[oldest.key] = nil
                        forgotten += 1
                    }
                    expected = .deliver
                    model[publisher] = (sequence, now, order)
                }
                XCTAssertEqual(gaps.record(publisher: publisher, sequence: sequence, now: now), expected)
                XCTAssertEqual(gaps.table.count, model.count)
                XCTAssertEqual(gaps.table.forgotten, forgotten)
                if gaps.table.forgotten != forgotten { return }
            }
        }
    }

    func testWindowCostIsLogarithmicForHolesInDescendingOrder() {
        // 150 000 frames, every other sequence number, in descending order: 150 000 ranges.
        var window = SequenceWindow()
        let count = 150_000
        for index in stride(from: count, through: 1, by: -1) {
            XCTAssertTrue(window.insert(UInt64(index) * 2))
        }
        XCTAssertEqual(window.rangeCount, count)
        let log2 = Double(Int.bitWidth - count.leadingZeroBitCount)  // 18
        // A treap's expected depth is about 2 ln n (~ 24 here); an insertion visits a few paths.
        // An array-backed window moves ~ n²/4 ≈ 5.6 billion elements for this input.
        let bound = 12 * Double(count) * log2
        XCTAssertLessThan(Double(window.visits), bound, "insertions visited \(window.visits) nodes")
        // The holes, ascending: each joins two ranges, until one is left.
        let before = window.visits
        for index in 1...count { XCTAssertTrue(window.insert(UInt64(index) * 2 - 1)) }
        XCTAssertEqual(window.ranges, [1...UInt64(2 * count)])
        XCTAssertLessThan(Double(window.visits - before), bound)
        // Every number again: each a duplicate, found in O(1) once it is one range.
        for index in 1...2 * count { XCTAssertFalse(window.insert(UInt64(index))) }
    }

    func testDeDuplicationWindowsStayWithinTheirRangeBudget() {
        // One publisher sending every other number: each frame makes a hole, i.e. a range.
        var filter = DuplicateFilter(rangeBudget: 100)
        for number in stride(from: UInt64(1), through: 999, by: 2) {
            XCTAssertEqual(filter.record(publisher: 1, sequence: number, now: 0), .deliver)
            XCTAssertLessThanOrEqual(filter.table.totalWeight, 100)
        }
        XCTAssertEqual(filter.forgottenRanges, 400)
        // The 100 highest ranges are remembered; the lowest were forgotten (and counted).
        XCTAssertEqual(filter.record(publisher: 1, sequence: 999, now: 0), .duplicate)
        XCTAssertEqual(filter.record(publisher: 1, sequence: 801, now: 0), .duplicate)
        XCTAssertEqual(filter.record(publisher: 1, sequence: 1, now: 0), .deliver)
        // Many publishers with one range each stay within the budget by forgetting the oldest.
        var many = DuplicateFilter(limits: PublisherLimits(capacity: 1_000, idleExpiry: .max), rangeBudget: 50)
        for publisher in 1...200 as ClosedRange<UInt64> {
            XCTAssertEqual(many.record(publisher: publisher, sequence: 1, now: publisher), .deliver)
        }
        XCTAssertEqual(many.table.count, 50)
        XCTAssertEqual(many.table.totalWeight, 50)
        XCTAssertEqual(many.table.forgotten, 150)
        XCTAssertEqual(many.record(publisher: 200, sequence: 1, now: 201), .duplicate)
    }

    func testWindowAgreesWithASetInRandomOrder() {
        var generator = SystemRandomNumberGenerator()
        var window = SequenceWindow()
        var delivered = Set<UInt64>()
        for _ in 0..<50_000 {
            let number = UInt64.random(in: 1_000...6_000, using: &generator)
            XCTAssertEqual(window.insert(number), delivered.insert(number).inserted)
        }
        var expected: [ClosedRange<UInt64>] = []
        for number in delivered.sorted() {
            if let last = expected.last, last.upperBound + 1 == number {
                expected[expected.count - 1] = last.lowerBound...number
            } else {
                expected.append(number...number)
            }
        }
        XCTAssertEqual(window.ranges, expected)
    }
}
