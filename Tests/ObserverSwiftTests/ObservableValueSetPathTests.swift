import Dispatch
import Foundation
import Observation
import ObserverSwift
import ObserverTestSupport
import XCTest

/// The set path's own guarantees: Observation still sees sets however many
/// untracked sets came first, readers never see a half-written value, a
/// setter that finds the turn taken waits for the round and then delivers
/// in order, and replaced values are released.
final class ObservableValueSetPathTests: XCTestCase {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testTrackingAfterManyUntrackedSetsStillFires() {
        let level = ObservableValue(0)
        for value in 1...1_000 { level.value = value }
        let changed = SetPathFlag()
        let seen = withObservationTracking {
            level.value
        } onChange: {
            changed.set()
        }
        XCTAssertEqual(seen, 1_000)
        XCTAssertFalse(changed.isSet)
        level.value = 1_001
        XCTAssertTrue(changed.isSet)
        XCTAssertEqual(level.value, 1_001)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testTrackingInstalledAgainAfterEachChangeFiresEachTime() {
        let level = ObservableValue(0)
        for round in 1...5 {
            let changed = SetPathFlag()
            withObservationTracking {
                _ = level.value
            } onChange: {
                changed.set()
            }
            for value in 0..<round { level.value = round * 10 + value }
            XCTAssertTrue(changed.isSet, "round \(round)")
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testTrackingFiresForASetFromAnotherThread() {
        let level = ObservableValue("a")
        let changed = DispatchSemaphore(value: 0)
        withObservationTracking {
            _ = level.value
        } onChange: {
            changed.signal()
        }
        let setter = JoinableThread { level.value = "b" }
        setter.join()
        XCTAssertEqual(changed.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(level.value, "b")
    }

    /// Observation's `onChange` runs inside the set, before the value is
    /// stored; a replaying subscribe made there gets the value before the
    /// set, then the set's round: no gap, no repeat.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func testReplayFromObservationsCallbackGetsTheValueBeforeTheSet() {
        let level = ObservableValue(0)
        let late = Received<Int>()
        let lateToken = SharedVariable<Subscription?>(nil)
        withObservationTracking {
            _ = level.value
        } onChange: {
            lateToken.value = level.replaying.subscribe { late.append($0) }
        }
        level.value = 1
        XCTAssertEqual(late.values, [0, 1])
        level.value = 2
        XCTAssertEqual(late.values, [0, 1, 2])
        lateToken.value?.cancel()
    }

    /// Two threads read while one sets pairs (n, n) of heap-allocated
    /// strings: every read is a pair the setter stored, never half of one,
    /// and each reader sees the values in the order they were set.
    func testReadersNeverSeeAHalfWrittenValue() {
        let sets = 40_000
        let pair = ObservableValue(SetPathPair(0))
        let stop = LockedCounter()
        let problems = Received<String>()
        let readers = (0..<2).map { _ in
            JoinableThread {
                var last = -1
                while stop.value == 0 {
                    let read = pair.value
                    guard read.isWhole else {
                        problems.append("torn: \(read.number) / \(read.text)")
                        return
                    }
                    if read.number < last { problems.append("went back from \(last) to \(read.number)") }
                    last = read.number
                }
            }
        }
        for number in 1...sets { pair.value = SetPathPair(number) }
        stop.increment()
        readers.forEach { $0.join() }
        XCTAssertEqual(problems.values, [])
        XCTAssertEqual(pair.value.number, sets)
    }

    /// A set from another thread during a slow round waits for it, then
    /// delivers after it: observers see the values in order.
    func testSetterFindingTheTurnTakenWaitsThenDeliversInOrder() {
        let level = ObservableValue(0)
        let recorder = Received<Int>()
        let roundStarted = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        _ = level.subscribe { value in
            if value == 1 {
                roundStarted.signal()
                _ = release.wait(timeout: .now() + 30)
            }
            recorder.append(value)
        }
        let first = JoinableThread { level.value = 1 }
        XCTAssertEqual(roundStarted.wait(timeout: .now() + 10), .success, "the round of 1 started")
        let second = JoinableThread { level.value = 2 }
        XCTAssertFalse(second.join(timeout: 0.05), "the set of 2 returned during the round of 1")
        release.signal()
        first.join()
        second.join()
        XCTAssertEqual(recorder.values, [1, 2])
        XCTAssertEqual(level.value, 2)
    }

    /// Many threads contending for the turn all get it (none is left
    /// waiting), and every set is delivered once.
    func testContendedSettersAllFinish() {
        let level = ObservableValue(0)
        let delivered = LockedCounter()
        _ = level.subscribe { _ in delivered.increment() }
        let threads = (0..<6).map { thread in
            JoinableThread {
                for index in 0..<2_000 { level.value = thread * 10_000 + index }
            }
        }
        threads.forEach { $0.join() }
        XCTAssertEqual(delivered.value, 12_000)
        XCTAssertEqual(level.triggersCount, 12_000)
    }

    /// The value a set replaces stays stored (in the second copy) until the
    /// next set, then is released.
    func testReplacedValuesAreReleased() {
        weak var first: SetPathObject?
        let holder = ObservableValue(SetPathObject())
        first = holder.value
        XCTAssertNotNil(first)
        holder.value = SetPathObject()
        holder.value = SetPathObject()
        XCTAssertNil(first, "released once two later values were set")
    }
}

private struct SetPathPair: Sendable {
    let number: Int
    let text: String
    init(_ number: Int) {
        self.number = number
        // Long enough to live on the heap, so a torn read would also be a
        // use-after-free that AddressSanitizer reports.
        text = SetPathPair.text(for: number)
    }
    static func text(for number: Int) -> String { "the pair stored for number \(number)" }
    var isWhole: Bool { text == SetPathPair.text(for: number) }
}

private final class SetPathObject: Sendable {}

private final class SetPathFlag: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private var flag = false
    private let lock = NSLock()
    func set() { lock.withLock { flag = true } }
    var isSet: Bool { lock.withLock { flag } }
}
