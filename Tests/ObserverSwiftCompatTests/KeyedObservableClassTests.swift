import Dispatch
import Foundation
import ObserverSwiftCompat  // not @testable: written as a user's module would be
import XCTest

// Flowduino 2.x's keyed test, as its users write it: the key type is
// inferred at each call, `withKeyedObservers(key:)` hands the key over.

protocol TestKeyedObservable: AnyObject {
    func onValueChanged(key: String, oldValue: String, newValue: String)
}

class TestKeyedObservableClass: KeyedObservableClass {
    private var keyValues: [String: String] = ["A": "Hello", "B": "Foo"]

    func setValue(key: String, value: String) {
        withKeyedObservers(key: key) { (key, observer: TestKeyedObservable) in
            observer.onValueChanged(key: key, oldValue: self.keyValues[key]!, newValue: value)
        }
        self.keyValues[key] = value
    }
}

final class TestKeyedObserverClass: TestKeyedObservable, @unchecked Sendable {
    // @unchecked: `values` and `callCount` are only touched while `lock` is held.
    private let lock = NSLock()
    private var values: [String: String] = ["A": "Hello", "B": "Foo"]
    private var callCount = 0

    var keyValues: [String: String] { lock.withLock { values } }
    var calls: Int { lock.withLock { callCount } }

    func onValueChanged(key: String, oldValue: String, newValue: String) {
        lock.withLock {
            values[key] = newValue
            callCount += 1
        }
    }
}

/// A subclass with its own init().
class KeyedCounterWithInit: KeyedObservableClass {
    let label: String

    override init() {
        label = "counter"
        super.init()
    }

    func bump(_ key: Int) {
        withKeyedObservers(key: key) { (key, observer: KeyedCountObserver) in observer.counted(key) }
        withObservers { (observer: KeyedCountObserver) in observer.counted(-key) }
    }
}

protocol KeyedCountObserver: AnyObject {
    func counted(_ key: Int)
}

/// An append-only list behind an `NSLock` (the library's `Locked` is
/// internal, and this file sees only the public API).
final class KeyedTestLog<Element>: @unchecked Sendable {
    // @unchecked: `elements` is only touched while `lock` is held.
    private let lock = NSLock()
    private var elements: [Element] = []
    func append(_ element: Element) { lock.withLock { elements.append(element) } }
    var all: [Element] { lock.withLock { elements } }
}

/// A counter behind an `NSLock`, for the same reason.
final class KeyedTestCount: @unchecked Sendable {
    // @unchecked: `count` is only touched while `lock` is held.
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

final class KeyedCountRecorder: KeyedCountObserver, @unchecked Sendable {
    // @unchecked: state behind locks.
    let keys = KeyedTestLog<Int>()
    let count = KeyedTestCount()
    let received = DispatchSemaphore(value: 0)
    func counted(_ key: Int) {
        keys.append(key)
        count.increment()
        received.signal()
    }
    var recorded: [Int] { keys.all }
}

/// A type that cannot inherit: both registries by composition.
class KeyedSomeBase {}
final class KeyedComposed: KeyedSomeBase, KeyedProtocolObservable, ProtocolObservable {
    let keyedObserverRegistry = KeyedObserverRegistry()
    let observerRegistry = ObserverRegistry()
}

// Flowduino's README thread shape with keys: subclass, override main(),
// loop while isExecuting, withKeyedObservers, Self.sleep.
protocol SensorReadingObserver: AnyObject {
    func reading(sensor: String, celsius: Double)
}

class SensorPollerThread: KeyedObservableThread {
    public override func main() {
        while self.isExecuting {
            for sensor in ["boiler", "attic"] {
                let celsius = Double.random(in: 15...25)
                withKeyedObservers(key: sensor) { (sensor, observer: SensorReadingObserver) in
                    observer.reading(sensor: sensor, celsius: celsius)
                }
            }
            withObservers { (observer: SensorReadingObserver) in
                observer.reading(sensor: "all", celsius: 0)
            }
            Self.sleep(forTimeInterval: 60.00)
        }
    }
}

final class SensorDisplay: SensorReadingObserver, @unchecked Sendable {
    // @unchecked: state behind a lock; the semaphore is thread-safe.
    let sensors = KeyedTestLog<String>()
    let received = DispatchSemaphore(value: 0)
    func reading(sensor: String, celsius: Double) {
        sensors.append(sensor)
        received.signal()
    }
    var seen: [String] { sensors.all }
}

/// Sends to one key as fast as it can, counting its sends.
final class KeyedBusyThread: KeyedObservableThread, @unchecked Sendable {
    // @unchecked: `sent` is behind a lock.
    let sent = KeyedTestCount()
    /// Signalled once the first send has returned.
    let firstSent = DispatchSemaphore(value: 0)
    override func main() {
        var first = true
        while isExecuting {
            withKeyedObservers(key: 1) { (_, observer: KeyedCountObserver) in observer.counted(1) }
            sent.increment()
            if first {
                first = false
                firstSent.signal()
            }
        }
    }
}

final class KeyedObservableClassTests: XCTestCase {
    private func waitFor(_ semaphore: DispatchSemaphore, _ message: String) {
        XCTAssertEqual(semaphore.wait(timeout: .now() + 30), .success, message)
    }

    func testFlowduinoKeyedUsage() {
        let keyA = "A"
        let keyB = "B"
        let observable = TestKeyedObservableClass()
        let observer = TestKeyedObserverClass()
        observable.addKeyedObserver(keys: [keyA, keyB], observer)
        XCTAssertEqual(observer.keyValues[keyA], "Hello")
        XCTAssertEqual(observer.keyValues[keyB], "Foo")
        observable.setValue(key: keyA, value: "World")
        XCTAssertEqual(observer.keyValues[keyA], "World")
        XCTAssertEqual(observer.keyValues[keyB], "Foo")
        observable.setValue(key: keyB, value: "Bar")
        XCTAssertEqual(observer.keyValues[keyA], "World")
        XCTAssertEqual(observer.keyValues[keyB], "Bar")
        observable.removeKeyedObserver(key: keyA, observer)
        observable.setValue(key: keyA, value: "Again")
        XCTAssertEqual(observer.keyValues[keyA], "World", "removed from A")
        observable.setValue(key: "C", value: "unobserved")
        XCTAssertEqual(observer.calls, 2)
    }

    func testArraysOfObserversAndKeysThroughTheClass() {
        let observable = TestKeyedObservableClass()
        let first = TestKeyedObserverClass()
        let second = TestKeyedObserverClass()
        XCTAssertEqual(observable.addKeyedObserver(key: "A", [first, second]), 2)
        XCTAssertEqual(observable.addKeyedObserver(keys: ["A", "B"], [first, second]), 2, "only B is new")
        observable.setValue(key: "B", value: "x")
        XCTAssertEqual(first.calls + second.calls, 2)
        XCTAssertEqual(observable.removeKeyedObserver(keys: ["A", "B"], [first]), 2)
        XCTAssertEqual(observable.removeKeyedObserver(key: "B", [first, second]), 1)
        observable.setValue(key: "A", value: "y")
        observable.setValue(key: "B", value: "z")
        XCTAssertEqual(first.calls, 1)
        XCTAssertEqual(second.calls, 2)
        XCTAssertEqual(observable.keyedObserverCount(key: "A"), 1)
        XCTAssertEqual(observable.keyedObserverCount(key: "B"), 0)
    }

    func testPlainAndKeyedObserversAreSeparate() {
        let counter = KeyedCounterWithInit()
        XCTAssertEqual(counter.label, "counter")
        let keyed = KeyedCountRecorder()
        let plain = KeyedCountRecorder()
        counter.addKeyedObserver(key: 7, keyed)
        counter.addObserver(plain)
        counter.bump(7)
        counter.bump(8)
        XCTAssertEqual(keyed.recorded, [7], "keyed: only its key")
        XCTAssertEqual(plain.recorded, [-7, -8], "plain: every withObservers, no keyed call")
        XCTAssertEqual(counter.observerCount, 1)
        XCTAssertEqual(counter.removeKeyedObserver(plain), 0, "plain observers are not keyed")
        XCTAssertEqual(counter.removeKeyedObserver(keyed), 1)
        XCTAssertTrue(counter.removeObserver(plain))
    }

    func testCompositionThroughKeyedProtocolObservable() {
        let composed = KeyedComposed()
        let recorder = KeyedCountRecorder()
        composed.addKeyedObserver(key: 3, recorder)
        composed.addObserver(recorder)
        composed.withKeyedObservers(keys: [3, 4]) { (key, observer: KeyedCountObserver) in observer.counted(key) }
        composed.withObservers { (observer: KeyedCountObserver) in observer.counted(0) }
        XCTAssertEqual(recorder.recorded, [3, 0])
        XCTAssertEqual(composed.removeAllKeyedObservers(), 1)
        XCTAssertEqual(composed.removeAllKeyedObservers(key: 3), 0)
        XCTAssertEqual(composed.keyedObserverRegistry.keyCount, 0)
    }

    func testKeyedObservableThreadSubclassCallsTheObserversOfEachKey() {
        let poller = SensorPollerThread()
        let boiler = SensorDisplay()
        let everything = SensorDisplay()
        let plain = SensorDisplay()
        poller.addKeyedObserver(key: "boiler", boiler)
        poller.addKeyedObserver(keys: ["boiler", "attic"], everything)
        poller.addObserver(plain)
        poller.start()
        waitFor(boiler.received, "boiler reading")
        waitFor(everything.received, "first reading")
        waitFor(everything.received, "second reading")
        waitFor(plain.received, "plain reading")
        poller.cancel()  // the loop is in its 60 s sleep: it ends now
        XCTAssertTrue(poller.waitUntilFinished(timeout: 30))
        XCTAssertEqual(boiler.seen, ["boiler"])
        XCTAssertEqual(everything.seen, ["boiler", "attic"])
        XCTAssertEqual(plain.seen, ["all"])
    }

    func testKeyedObserversChurnOnAnotherThreadWhileTheThreadSends() {
        let thread = KeyedBusyThread()
        let stable = KeyedCountRecorder()
        thread.addKeyedObserver(key: 1, stable)
        thread.start()
        // Churn only once the thread sends (it may start late on a loaded machine).
        XCTAssertEqual(thread.firstSent.wait(timeout: .now() + 10), .success, "the thread sends")
        for _ in 0..<2_000 {
            let transient = KeyedCountRecorder()
            thread.addKeyedObserver(keys: [1, 2], transient)
            if Bool.random() { thread.removeKeyedObserver(key: 1, transient) }
        }
        thread.cancel()
        thread.join()
        // Every send called `stable` exactly once, whatever the churn did.
        XCTAssertEqual(stable.count.value, thread.sent.value)
        XCTAssertGreaterThan(thread.sent.value, 0)
        XCTAssertEqual(thread.keyedObserverCount(key: 1), 1)
        XCTAssertEqual(thread.keyedObserverCount(key: 2), 0)
    }
}
