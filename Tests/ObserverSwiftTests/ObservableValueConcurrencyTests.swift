import Dispatch
import Foundation
import ObserverSwift
import ObserverTestSupport
import XCTest

final class ObservableValueConcurrencyTests: XCTestCase {
    /// Four threads set distinct values at once; three observers each get
    /// every value exactly once, all in the same order, and each setter's
    /// values in the order that thread set them.
    func testConcurrentSettersEveryObserverSeesEveryValueInOneOrder() {
        let threads = 4
        let perThread = 2_000
        let number = ObservableValue(-1)
        let recorders = (0..<3).map { _ in Received<Int>() }
        let observers = recorders.map { recorder in number.subscribe { recorder.append($0) } }
        let workers = (0..<threads).map { thread in
            JoinableThread {
                for index in 0..<perThread { number.value = thread * perThread + index }
            }
        }
        workers.forEach { $0.join() }

        let reference = recorders[0].values
        XCTAssertEqual(reference.count, threads * perThread)
        XCTAssertEqual(Set(reference).count, threads * perThread, "no value twice")
        for recorder in recorders.dropFirst() {
            XCTAssertEqual(recorder.values, reference, "observers disagree on the order")
        }
        for thread in 0..<threads {
            let own = reference.filter { $0 / perThread == thread }
            XCTAssertEqual(own, Array(thread * perThread..<(thread + 1) * perThread))
        }
        XCTAssertEqual(number.value, reference.last, "the last delivered value is the stored one")
        XCTAssertEqual(number.triggersCount, threads * perThread)
        withExtendedLifetime(observers) {}
    }

    /// Observers joining with replay while another thread counts up get a
    /// gapless run: the replayed value, then every later one, no repeat.
    func testReplayUnderConcurrentSetsHasNoGapAndNoRepeat() {
        let number = ObservableValue(0)
        let stop = LockedCounter()
        let setter = JoinableThread {
            var value = 0
            while stop.value == 0 {
                value += 1
                number.value = value
            }
        }
        var broken = 0
        for _ in 0..<5_000 {
            let recorder = Received<Int>()
            let sawThree = DispatchSemaphore(value: 0)
            let token = number.replaying.subscribe { value in
                recorder.append(value)
                if recorder.count == 3 { sawThree.signal() }
            }
            sawThree.wait()  // let a few sets through
            token.cancel()
            let values = recorder.values
            if values != Array(values[0]..<values[0] + values.count) { broken += 1 }
        }
        stop.increment()
        setter.join()
        XCTAssertEqual(broken, 0, "runs with a gap or a repeat")
    }

    /// Reading the value from another thread while a handler runs does not
    /// wait for the handler (the getter takes no notification turn).
    func testGetterDoesNotWaitForARunningHandler() {
        let number = ObservableValue(0)
        // The handlers below capture `number` (a cycle through its observer
        // list): remove them at the end so LeakSanitizer sees it freed.
        defer { number.unsubscribeAll() }
        let readDone = DispatchSemaphore(value: 0)
        let readerFinished = SharedVariable(DispatchTimeoutResult.timedOut)
        _ = number.subscribe { value in  // removed by the deferred removeAllObservers()
            guard value == 1 else { return }
            let reader = JoinableThread {
                XCTAssertEqual(number.value, 1)
                readDone.signal()
            }
            readerFinished.value = readDone.wait(timeout: .now() + 10)
            reader.join()
        }
        number.value = 1
        XCTAssertEqual(readerFinished.value, .success)
    }

    /// Setters, binders and removers on several threads at once: stable
    /// observers count exactly, and nothing deadlocks.
    func testSettersWhileObserversComeAndGo() {
        let number = ObservableValue(0)
        let stable = LockedCounter()
        let stableObserver = number.subscribe { _ in stable.increment() }
        let setters = (0..<2).map { _ in
            JoinableThread { for value in 0..<3_000 { number.value = value } }
        }
        let churn = JoinableThread {
            for round in 0..<1_000 {
                let token = round % 2 == 0 ? number.replaying.subscribe { _ in } : number.subscribe { _ in }
                token.cancel()
            }
        }
        setters.forEach { $0.join() }
        churn.join()
        XCTAssertEqual(stable.value, 6_000)
        XCTAssertEqual(number.subscribersCount, 1)
        withExtendedLifetime(stableObserver) {}
    }
}
