import Dispatch
import ObserverEngine
import XCTest

@testable import ObserverSwift

/// An `Event`'s weak-target box: the common one (synchronous, no limit)
/// carries no delivery terms and is a 72-byte object, an 80-byte glibc
/// chunk; a limited or queued one keeps its terms in an object of their own
/// and still delivers by them.
final class WeakTargetBoxTests: XCTestCase {
    final class Target: @unchecked Sendable {
        // @unchecked: written only on the sending thread, read after.
        var received: [Int] = []
    }

    typealias Box = EventTargetSubscriber<Target, Int>

    private func boxes(of event: Event<Int>) -> [Box] {
        var boxes: [Box] = []
        event.slots.forEachBox { boxes.append(unsafeDowncast($0, to: Box.self)) }
        return boxes
    }

    func testACommonBoxIsAnEightyByteChunk() throws {
        #if os(Linux)
            let usableSize = try HeapBlockSize.usableSizeOfObjects()
            let event = Event<Int>()
            let targets = (0..<32).map { _ in Target() }
            for target in targets { event.subscribe(target) { target, value in target.received.append(value) } }
            let boxes = boxes(of: event)
            XCTAssertEqual(boxes.count, 32)
            for box in boxes { XCTAssertNil(box.terms, "a synchronous box without a limit has no terms") }
            // glibc may hand out a bigger chunk than asked when the rest of a
            // free one is too small to split off: the smallest of 32 is the size.
            let bytes = boxes.map { usableSize($0) }
            XCTAssertLessThanOrEqual(
                bytes.min() ?? .max, 72, "a common box's usable bytes (an 80-byte chunk): \(bytes)")
            event.send(7)
            XCTAssertEqual(targets.map(\.received), Array(repeating: [7], count: 32))
        #else
            throw XCTSkip("measured with glibc's malloc_usable_size")
        #endif
    }

    func testALimitedBoxKeepsItsTermsAndDeliversExactlyItsLimit() {
        let event = Event<Int>()
        let target = Target()
        let token = event.subscribe(target, limit: 2) { target, value in target.received.append(value) }
        XCTAssertNotNil(boxes(of: event).first?.terms)
        for value in 1...4 { event.send(value) }
        XCTAssertEqual(target.received, [1, 2])
        XCTAssertFalse(token.isActive, "a spent limit ends the subscription")
    }

    func testAQueuedBoxDeliversOnItsQueue() {
        let event = Event<Int>()
        let target = Target()
        let queue = DispatchQueue(label: "weak-target-box")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let token = event.subscribe(target, delivery: .queue(queue)) { target, value in
            target.received.append(DispatchQueue.getSpecific(key: key) == true ? value : -value)
        }
        XCTAssertNotNil(boxes(of: event).first?.terms?.delivery.queue)
        event.send(5)
        // The queue is serial: once a block enqueued after the send has run,
        // so has the delivery.
        queue.sync {}
        XCTAssertEqual(target.received, [5], "delivered once, on its queue")
        token.cancel()
    }
}
