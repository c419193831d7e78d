import ObserverSwift
import XCTest

final class KeyedEventAsyncSequenceTests: XCTestCase {
    func testValuesForKeyDeliversOnlyThatKey() async {
        let quotes = KeyedEvent<String, Int>()
        var iterator = quotes.values(forKey: "ACME").makeAsyncIterator()
        quotes.send(1, forKey: "OTHER")
        quotes.send(2, forKey: "ACME")
        quotes.send(3, forKey: "ACME")
        let first = await iterator.next()
        let second = await iterator.next()
        XCTAssertEqual([first, second], [2, 3])
    }

    func testBufferingNewestForASlowConsumer() async {
        let quotes = KeyedEvent<String, Int>()
        var iterator = quotes.values(forKey: "ACME", bufferingPolicy: .bufferingNewest(1)).makeAsyncIterator()
        for value in 1...100 { quotes.send(value, forKey: "ACME") }
        let latest = await iterator.next()
        XCTAssertEqual(latest, 100)
    }

    func testCancellingTheConsumerRemovesTheKey() async {
        let quotes = KeyedEvent<String, Int>()
        let consumer = Task {
            for await _ in quotes.values(forKey: "ACME") {}
        }
        while quotes.subscribersCount(forKey: "ACME") == 0 { await Task.yield() }
        consumer.cancel()
        await consumer.value
        XCTAssertEqual(quotes.subscribersCount(forKey: "ACME"), 0)
        XCTAssertEqual(quotes.keyCount, 0, "the key's list is reclaimed with its last subscription")
    }
}
