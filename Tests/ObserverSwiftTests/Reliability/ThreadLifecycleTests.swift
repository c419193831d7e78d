import Dispatch
@_spi(EngineDiagnostics) import ObserverSwift
import XCTest

/// Sends from many kinds of threads: every delivery counted exactly, and the
/// per-thread epoch records are recycled instead of growing with the number
/// of threads that ever sent.
final class ThreadLifecycleTests: XCTestCase {
    /// More records than this after 10,000 threads means they are not recycled
    /// (at most 8 of the test's threads live at once; the rest is slack for
    /// Dispatch workers and threads other tests left running).
    private let recordGrowthBound = 64

    func testTenThousandShortLivedThreadsEachSendOnce() {
        let event = Event<Int>()
        let deliveries = AtomicCounter()
        let token = event.subscribe { _ in deliveries.increment() }
        let recordsBefore = ObserverCore.statistics.epochRecords
        let threads = 10_000
        let concurrent = 8
        for _ in 0..<(threads / concurrent) {
            runOnNewThreads(concurrent) { index in event.send(index) }
        }
        let recordsAfter = ObserverCore.statistics.epochRecords
        print("thread-lifecycle: epoch records \(recordsBefore) -> \(recordsAfter) after \(threads) threads")
        XCTAssertEqual(deliveries.value, threads)
        XCTAssertLessThanOrEqual(
            recordsAfter - recordsBefore, recordGrowthBound,
            "epoch records grow with the number of threads that ever sent")
        token.cancel()
    }

    func testSendsFromConcurrentPerform() {
        let event = Event<Int>()
        let deliveries = AtomicCounter()
        let sum = AtomicCounter()
        let token = event.subscribe { value in
            deliveries.increment()
            if value == 0 { sum.increment() }
        }
        let recordsBefore = ObserverCore.statistics.epochRecords
        DispatchQueue.concurrentPerform(iterations: 10_000) { index in
            event.send(index % 2)
        }
        XCTAssertEqual(deliveries.value, 10_000)
        XCTAssertEqual(sum.value, 5_000)
        XCTAssertLessThanOrEqual(ObserverCore.statistics.epochRecords - recordsBefore, recordGrowthBound)
        token.cancel()
    }

    func testSendsFromSwiftTasks() async {
        let event = Event<Int>()
        let deliveries = AtomicCounter()
        let token = event.subscribe { _ in deliveries.increment() }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<1_000 {
                group.addTask {
                    event.send(index)
                    await Task.yield()
                    event.send(index)
                }
            }
        }
        XCTAssertEqual(deliveries.value, 2_000)
        token.cancel()
    }
}
