@_spi(EngineDiagnostics) import ObserverSwift
import XCTest

final class EventAsyncSequenceTests: XCTestCase {
    func testValuesDeliversInOrderAndBuffersBeforeIteration() async {
        let event = Event<Int>()
        let values = event.values
        for value in 1...3 { event.send(value) }
        var iterator = values.makeAsyncIterator()
        var seen: [Int] = []
        for _ in 1...3 { seen.append(await iterator.next()!) }
        XCTAssertEqual(seen, [1, 2, 3])
    }

    func testCancellingTheConsumingTaskEndsTheSubscription() async throws {
        let event = Event<Int>()
        let started = AsyncStream.makeStream(of: Void.self)
        let consumer = Task {
            var count = 0
            let values = event.values  // subscribed before announcing the start
            started.continuation.yield()
            for await _ in values { count += 1 }
            return count
        }
        var startedIterator = started.stream.makeAsyncIterator()
        await startedIterator.next()
        XCTAssertEqual(event.subscribersCount, 1)
        consumer.cancel()
        _ = await consumer.value
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testDroppingTheIteratorEndsTheSubscription() async {
        let event = Event<Int>()
        do {
            var iterator = event.values.makeAsyncIterator()
            event.send(1)
            let first = await iterator.next()
            XCTAssertEqual(first, 1)
        }
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testBufferingNewestKeepsOnlyTheLatestForASlowConsumer() async {
        let event = Event<Int>()
        var iterator = event.values(bufferingPolicy: .bufferingNewest(2)).makeAsyncIterator()
        for value in 1...1000 { event.send(value) }
        let first = await iterator.next()
        let second = await iterator.next()
        XCTAssertEqual([first, second], [999, 1000])
    }

    func testBufferingOldestDropsNewValuesWhenFull() async {
        let event = Event<Int>()
        var iterator = event.values(bufferingPolicy: .bufferingOldest(2)).makeAsyncIterator()
        for value in 1...1000 { event.send(value) }
        let first = await iterator.next()
        let second = await iterator.next()
        XCTAssertEqual([first, second], [1, 2])
        event.send(5000)
        let third = await iterator.next()
        XCTAssertEqual(third, 5000, "room again once consumed")
    }

    func testConsumerCancelledRightAfterASendLeavesNoSubscription() async {
        let ticks = Event<Int>()
        let consumer = Task {
            for await tick in ticks.values(bufferingPolicy: .bufferingNewest(1)) {
                print("latest tick", tick)
            }
        }
        ticks.send(1)
        consumer.cancel()
        await consumer.value
        XCTAssertEqual(ticks.subscribersCount, 0)
    }

    func testSequenceFinishesWhenTheEventIsDeallocated() async throws {
        var event: Event<Int>? = Event<Int>()
        var iterator = event!.values.makeAsyncIterator()
        event!.send(1)
        event = nil
        try ObserverCore.reclaimNow()
        let first = await iterator.next()
        let end = await iterator.next()
        XCTAssertEqual(first, 1)
        XCTAssertNil(end)
    }
}
