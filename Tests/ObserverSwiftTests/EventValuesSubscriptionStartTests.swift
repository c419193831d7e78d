import XCTest

@testable import ObserverSwift

/// `values` subscribes when it is called, as the Events guide states: what is
/// sent before iteration starts waits in the buffer.
final class EventValuesSubscriptionStartTests: XCTestCase {
    func testValuesSentBeforeIterationStartsAreBuffered() async {
        let event = Event<Int>()
        let values = event.values
        XCTAssertEqual(event.subscribersCount, 1, "subscribed by the call")
        event.send(1)
        event.send(2)
        var iterator = values.makeAsyncIterator()
        let first = await iterator.next()
        let second = await iterator.next()
        XCTAssertEqual([first, second], [1, 2])
    }

    func testBufferingNewestKeepsTheLatestValueSentBeforeIteration() async {
        let event = Event<Int>()
        let values = event.values(bufferingPolicy: .bufferingNewest(1))
        event.send(1)
        event.send(2)
        var iterator = values.makeAsyncIterator()
        let latest = await iterator.next()
        XCTAssertEqual(latest, 2)
    }
}
