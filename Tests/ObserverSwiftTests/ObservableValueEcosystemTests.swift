import Observation
import ObserverSwift
import XCTest

final class ObservableValueEcosystemTests: XCTestCase {
    func testValuesStartWithTheCurrentValue() async {
        let level = ObservableValue(1)
        var iterator = level.values.makeAsyncIterator()
        level.value = 2
        level.value = 3
        var seen: [Int] = []
        for _ in 0..<3 { seen.append(await iterator.next()!) }
        XCTAssertEqual(seen, [1, 2, 3])
    }

    func testValuesHonourTheBufferingPolicyForASlowConsumer() async {
        let level = ObservableValue(0)
        var iterator = level.values(bufferingPolicy: .bufferingNewest(1)).makeAsyncIterator()
        for value in 1...500 { level.value = value }
        let latest = await iterator.next()
        XCTAssertEqual(latest, 500)
    }

    func testCancellingTheConsumerRemovesTheObserver() async {
        let level = ObservableValue(0)
        let consumer = Task {
            for await _ in level.values {}
        }
        while level.subscribersCount == 0 { await Task.yield() }
        consumer.cancel()
        await consumer.value
        XCTAssertEqual(level.subscribersCount, 0)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testWithObservationTrackingSeesSets() {
        let title = ObservableValue("Inbox")
        let changed = ChangeFlag()
        withObservationTracking {
            _ = title.value
        } onChange: {
            changed.set()
        }
        XCTAssertFalse(changed.isSet)
        title.value = "Archive"
        XCTAssertTrue(changed.isSet)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testObservationModelReadingAnObservableValueIsTracked() {
        let model = ToolbarModel()
        let changed = ChangeFlag()
        withObservationTracking {
            _ = model.caption
        } onChange: {
            changed.set()
        }
        model.count.value = 3
        XCTAssertTrue(changed.isSet)
        XCTAssertEqual(model.caption, "3 items")
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testObservationTrackingIsToldOfASet() {
        let title = ObservableValue("Inbox")
        let changed = ChangeFlag()
        withObservationTracking {
            print(title.value)
        } onChange: {
            print("title will change")
            changed.set()
        }
        title.value = "Archive"
        XCTAssertTrue(changed.isSet)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testSkippedDuplicatesStillTrackNothing() {
        let mode = ObservableValue("light", skipsDuplicates: true)
        let changed = ChangeFlag()
        withObservationTracking {
            _ = mode.value
        } onChange: {
            changed.set()
        }
        mode.value = "light"
        XCTAssertFalse(changed.isSet, "an unchanged value is not a mutation")
        mode.value = "dark"
        XCTAssertTrue(changed.isSet)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
private final class ToolbarModel {
    let count = ObservableValue(0)
    var caption: String { "\(count.value) items" }
}

private final class ChangeFlag: @unchecked Sendable {
    private var flag = false
    private let lock = NSLock()
    func set() { lock.withLock { flag = true } }
    var isSet: Bool { lock.withLock { flag } }
}
