import Dispatch
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

protocol ThermometerObserver: AnyObject {
    func temperatureChanged(to celsius: Double)
}

final class RecordingThermometerObserver: ThermometerObserver, Sendable {
    let temperatures = Recorder<Double>("ThermometerObserver.temperatureChanged")
    func temperatureChanged(to celsius: Double) { temperatures.record(celsius) }
}

final class RecorderTests: XCTestCase {
    func testRecordsWhatAnEventSendsAndReadsInOrder() async throws {
        let saved = Event<Int>()
        let recorder = saved.record()
        saved.send(1)
        saved.send(2)
        saved.send(3)
        XCTAssertEqual(recorder.values, [1, 2, 3])
        let first = try await recorder.next()
        XCTAssertEqual(first, 1)
        let rest = try await recorder.values(count: 2)
        XCTAssertEqual(rest, [2, 3])
        try await recorder.expectNoMoreValues(within: .milliseconds(20))
        XCTAssertEqual(recorder.values, [1, 2, 3], "reading does not remove values from the snapshot")
    }

    func testNextWaitsForAValueSentLaterFromAnotherThread() async throws {
        let saved = Event<Int>()
        let recorder = saved.record()
        let readerWaits = DispatchSemaphore(value: 0)
        let sender = JoinableThread {
            readerWaits.wait()
            saved.send(7)
        }
        async let value = recorder.next(timeout: .seconds(10))
        readerWaits.signal()
        let received = try await value
        sender.join()
        XCTAssertEqual(received, 7)
    }

    func testAWaitThatEndedKeepsNothingAliveUntilItsDeadline() async throws {
        let saved = Event<Int>()
        weak var released: Recorder<Int>?
        do {
            let recorder = saved.record()
            released = recorder
            saved.send(1)
            let ready = try await recorder.next(timeout: .seconds(600))
            XCTAssertEqual(ready, 1)
            let sender = JoinableThread { saved.send(2) }
            let later = try await recorder.next(timeout: .seconds(600))
            sender.join()
            XCTAssertEqual(later, 2)
            try await recorder.expectNoMoreValues(within: .milliseconds(10))
        }
        XCTAssertNil(released, "a read that returned holds its recorder until its 600 s deadline")
    }

    func testNextTimesOutNamingTheSourceWhatWasExpectedAndWhatArrived() async {
        let saved = Event<Int>()
        let recorder = saved.record()
        saved.send(4)
        do {
            _ = try await recorder.values(count: 3, timeout: .milliseconds(50))
            XCTFail("three values were read where one was sent")
        } catch {
            XCTAssertEqual(
                "\(error)", "Event<Int>: expected 3 values within 0.05 s, 1 arrived: [4]")
        }
        do {
            let recorderOfNothing = Event<String>().record()
            _ = try await recorderOfNothing.next(timeout: .milliseconds(20))
            XCTFail("a value was read where none was sent")
        } catch {
            XCTAssertEqual("\(error)", "Event<String>: expected 1 value within 0.02 s, 0 arrived: []")
        }
    }

    func testExpectNoMoreValuesFailsOnAValueBeyondWhatWasRead() async throws {
        let saved = Event<Int>()
        let recorder = saved.record()
        saved.send(1)
        _ = try await recorder.next()
        saved.send(2)
        do {
            try await recorder.expectNoMoreValues(within: .milliseconds(10))
            XCTFail("an unread value went unnoticed")
        } catch {
            XCTAssertEqual("\(error)", "Event<Int>: expected no more values, 1 arrived: [2]")
        }
    }

    func testExpectNoMoreValuesFailsOnAValueArrivingWhileItWaits() async throws {
        let saved = Event<Int>()
        let recorder = saved.record()
        let queue = DispatchQueue(label: "late sender")
        queue.asyncAfter(deadline: .now() + .milliseconds(20)) { saved.send(9) }
        do {
            try await recorder.expectNoMoreValues(within: .seconds(10))
            XCTFail("a value sent while it waited went unnoticed")
        } catch {
            XCTAssertEqual("\(error)", "Event<Int>: expected no more values within 10 s, 1 arrived: [9]")
        }
    }

    func testRecordsAnObservableValueAKeyAndAKeySelection() async throws {
        let title = ObservableValue("draft")
        let titles = title.record()
        title.value = "final"
        let titleSeen = try await titles.next()
        XCTAssertEqual(titleSeen, "final")

        let stock = KeyedEvent<String, Int>()
        let apples = stock.record(key: "apple")
        let fruit = stock.forKeys(["apple", "pear"]).record()
        stock.send(3, forKey: "apple")
        stock.send(5, forKey: "plum")
        stock.send(2, forKey: "pear")
        XCTAssertEqual(apples.values, [3])
        XCTAssertEqual(fruit.values.map(\.0), ["apple", "pear"])
        XCTAssertEqual(fruit.values.map(\.1), [3, 2])
        XCTAssertEqual(apples.source, "KeyedEvent<String, Int> key apple")
    }

    func testARecordingObserverRecordsARegistrysProtocolCalls() async throws {
        let registry = ObserverRegistry()
        let observer = RecordingThermometerObserver()
        let token = registry.addObserver(observer, delivery: .queue(DispatchQueue(label: "thermometer")))
        registry.withObservers { (observer: any ThermometerObserver) in observer.temperatureChanged(to: 21.5) }
        let seen = try await observer.temperatures.next()
        XCTAssertEqual(seen, 21.5)
        token.cancel()
    }

    func testCancelAndReleaseEndTheRecordersSubscription() async throws {
        let saved = Event<Int>()
        let recorder = saved.record()
        XCTAssertEqual(saved.subscribersCount, 1)
        recorder.cancel()
        saved.send(1)
        XCTAssertEqual(recorder.values, [])
        XCTAssertEqual(saved.subscribersCount, 0)
        do {
            _ = saved.record()
        }
        XCTAssertEqual(saved.subscribersCount, 0, "a released recorder cancels its subscription")
    }
}
