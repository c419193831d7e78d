import Dispatch
import Foundation
import ObserverEngine
import ObserverTestSupport
import XCTest

@testable import ObserverSwiftCompat

// Flowduino's README thread, as a user writes it in their own module (this
// file imports neither CoreFoundation nor anything else special).

protocol RandomNumberObserver: AnyObject {
    func onRandomNumber(_ randomNumber: Int)
}

class RandomNumberObservableThread: ObservableThread {
    override init() {
        super.init()
        self.start()  // This will start the thread on creation.
    }

    public override func main() {  // We must override this method
        while self.isExecuting {  // Loops for as long as the Thread is running
            let randomNumber = Int.random(in: -9000..<9001)
            // Now let's notify all of our Observers!
            withObservers { (observer: RandomNumberObserver) in
                observer.onRandomNumber(randomNumber)
            }
            Self.sleep(forTimeInterval: 60.00)  // Sleep for 60 seconds
        }
    }
}

final class RandomNumberObserverClass: RandomNumberObserver, @unchecked Sendable {
    // @unchecked: state behind a lock; the semaphore is thread-safe.
    let numbers = SharedVariable<[Int]>([])
    let received = DispatchSemaphore(value: 0)
    let threads = SharedVariable<[String?]>([])

    public func onRandomNumber(_ randomNumber: Int) {
        numbers.update { $0.append(randomNumber) }
        threads.update { $0.append(Thread.current.name) }
        received.signal()
    }
}

/// Counts its loop iterations; sleeps a minute between them.
final class IterationThread: ObservableThread, @unchecked Sendable {
    // @unchecked: `iterations` is atomic; the rest is immutable.
    let iterations = HeapAtomicWord<Int>(0)
    let iterated = DispatchSemaphore(value: 0)
    let sawItself = HeapAtomicWord<Bool>(false)
    let ownWaitResult = HeapAtomicWord<Int>(-1)

    override func main() {
        sawItself.store(ObservableThread.current === self, ordering: .relaxed)
        ownWaitResult.store(waitUntilFinished(timeout: 5) ? 1 : 0, ordering: .relaxed)
        while isExecuting {
            let iteration = iterations.wrappingAdd(1, ordering: .relaxed).newValue
            withObservers { (observer: AlphaObserver) in observer.alpha(iteration) }
            iterated.signal()
            Self.sleep(forTimeInterval: 60)
        }
    }
}

/// Records whether `main()` ran and what `isExecuting` said then.
final class OneShotThread: ObservableThread, @unchecked Sendable {
    let runs = HeapAtomicWord<Int>(0)
    let executingInMain = HeapAtomicWord<Bool>(false)
    let threadName = SharedVariable<String?>(nil)

    override func main() {
        runs.wrappingAdd(1, ordering: .relaxed)
        executingInMain.store(isExecuting, ordering: .relaxed)
        let name = ObservableThread.current?.name
        threadName.update { $0 = name }
    }
}

final class ObservableThreadTests: XCTestCase {
    private func waitFor(_ semaphore: DispatchSemaphore, _ message: String) {
        XCTAssertEqual(semaphore.wait(timeout: .now() + 30), .success, message)
    }

    func testFlowduinoReadmeThreadNotifiesObserversAndCancelsMidSleep() {
        let myObserver = RandomNumberObserverClass()
        let myThread = RandomNumberObservableThread()
        myThread.addObserver(myObserver)
        // The first number may have been drawn before the observer was
        // added; cancel wakes the 60-second sleep, so one more is not
        // needed to end.
        myThread.notifyChange()  // wakes the sleep: the loop runs again now
        waitFor(myObserver.received, "an observer hears a random number")
        XCTAssertTrue(myThread.isExecuting)
        myThread.cancel()
        XCTAssertFalse(myThread.isExecuting)
        XCTAssertTrue(myThread.waitUntilFinished(timeout: 30), "cancel interrupts Self.sleep")
        XCTAssertTrue(myThread.isFinished)
        XCTAssertTrue(myThread.isCancelled)
        let numbers = myObserver.numbers.value
        XCTAssertFalse(numbers.isEmpty)
        XCTAssertTrue(numbers.allSatisfy { (-9000..<9001).contains($0) })
    }

    func testNotifyChangeWakesTheSleepingLoopAndSendsChanges() {
        let thread = IterationThread()
        let observer = AlphaOnly("observer")
        thread.addObserver(observer)
        let changes = HeapAtomicWord<Int>(0)
        let token = thread.changes.subscribe { changes.wrappingAdd(1, ordering: .relaxed) }
        thread.start()
        waitFor(thread.iterated, "first iteration")
        // The loop is (or is about to be) in a 60-second sleep.
        thread.notifyChange()
        waitFor(thread.iterated, "notifyChange wakes the sleep")
        XCTAssertGreaterThanOrEqual(thread.iterations.load(ordering: .relaxed), 2)
        XCTAssertEqual(changes.load(ordering: .relaxed), 1)
        thread.cancel()
        thread.join()
        XCTAssertTrue(thread.isFinished)
        XCTAssertEqual(observer.callCount, thread.iterations.load(ordering: .relaxed))
        XCTAssertTrue(thread.sawItself.load(ordering: .relaxed), "ObservableThread.current inside main()")
        XCTAssertEqual(thread.ownWaitResult.load(ordering: .relaxed), 0, "waiting for itself returns false")
        XCTAssertNil(ObservableThread.current)
        token.cancel()
    }

    func testLifecycleStartTwiceJoinWithoutStartAndCancelBeforeStart() {
        let thread = OneShotThread()
        XCTAssertFalse(thread.isExecuting)
        XCTAssertTrue(thread.waitUntilFinished(timeout: 0), "never started: nothing to wait for")
        thread.name = "one-shot"
        thread.start()
        thread.start()
        thread.join()
        thread.start()
        thread.join()
        XCTAssertEqual(thread.runs.load(ordering: .relaxed), 1)
        XCTAssertTrue(thread.executingInMain.load(ordering: .relaxed))
        XCTAssertTrue(thread.isFinished)
        XCTAssertFalse(thread.isExecuting)
        XCTAssertEqual(thread.threadName.value, "one-shot")
        XCTAssertEqual(thread.name, "one-shot")

        let cancelled = OneShotThread()
        cancelled.cancel()
        cancelled.start()
        cancelled.join()
        XCTAssertEqual(cancelled.runs.load(ordering: .relaxed), 1, "main() runs, as with Foundation's Thread")
        XCTAssertFalse(cancelled.executingInMain.load(ordering: .relaxed))
    }

    func testObserversChooseWhereTheirCallsRun() {
        let queue = DispatchQueue(label: "thread.observer")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "observer queue")
        final class Where: AlphaObserver, @unchecked Sendable {
            let places = SharedVariable<[String]>([])
            let key: DispatchSpecificKey<String>
            let done = DispatchSemaphore(value: 0)
            init(_ key: DispatchSpecificKey<String>) { self.key = key }
            func alpha(_ value: Int) {
                let place =
                    Thread.isMainThread
                    ? "main" : (DispatchQueue.getSpecific(key: key) ?? ObservableThread.current?.name ?? "?")
                places.update { $0.append(place) }
                done.signal()
            }
        }
        final class Sender: ObservableThread, @unchecked Sendable {
            override func main() {
                // Reaches every observer on its delivery (withObservers calls
                // only the synchronous ones).
                dispatchToObservers { (observer: AlphaObserver) in observer.alpha(1) }
            }
        }
        let sender = Sender()
        sender.name = "sender"
        let inline = Where(key)
        let queued = Where(key)
        let onMain = Where(key)
        sender.addObserver(inline)
        sender.addObserver(queued, delivery: .queue(queue))
        sender.addObserver(onMain, delivery: .queue(.main))
        sender.start()
        sender.join()
        waitFor(inline.done, "inline")
        waitFor(queued.done, "queued")
        let mainDelivered = expectation(description: "main actor delivery")
        DispatchQueue.global().async {
            _ = onMain.done.wait(timeout: .now() + 30)
            mainDelivered.fulfill()
        }
        waitUntilFulfilled([mainDelivered], timeout: 60)
        XCTAssertEqual(inline.places.value, ["sender"])
        XCTAssertEqual(queued.places.value, ["observer queue"])
        XCTAssertEqual(onMain.places.value, ["main"])
    }

    func testSleepOutsideAnObservableThreadIsAPlainSleep() {
        let before = Date()
        ObservableThread.sleep(forTimeInterval: 0.01)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(before), 0.01)
    }

    func testThreadIsReleasedAfterItFinishes() {
        weak var weakThread: OneShotThread?
        do {
            let thread = OneShotThread()
            weakThread = thread
            thread.start()
            thread.join()
        }
        // The owned Thread may still be unwinding; give it a moment.
        for _ in 0..<1000 where weakThread != nil { Thread.sleep(forTimeInterval: 0.005) }
        XCTAssertNil(weakThread)
    }
}
