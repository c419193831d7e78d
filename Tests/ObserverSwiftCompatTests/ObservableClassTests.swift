import Foundation
import ObserverSwift
import ObserverSwiftCompat  // ObservableClass, Flowduino's base class, and its array forms
import ObserverTestSupport
import XCTest

// Flowduino's README, as a user writes it (only `self.` added where Swift 6
// requires it in an escaping closure).

/// Protocol defining what Methods the Obverable Class can invoke on any Observer
protocol DummyObserverProtocol: AnyObject {
    func onFooChanged(oldValue: String, newValue: String)
    func onBarChanged(oldValue: String, newValue: String)
}

/// Class that can be Observed
class Dummy: ObservableClass {
    private var _foo: String = "Hello"
    public var foo: String {
        get {
            return _foo
        }
        set {
            // Invoke onFooChanged for all current Observers
            withObservers { (observer: DummyObserverProtocol) in
                observer.onFooChanged(oldValue: self._foo, newValue: newValue)
            }
            _foo = newValue
        }
    }

    private var _bar: String = "World"
    public var bar: String {
        get {
            return _bar
        }
        set {
            // Invoke onBarChanged for all current Observers
            withObservers { (observer: DummyObserverProtocol) in
                observer.onBarChanged(oldValue: self._bar, newValue: newValue)
            }
            _bar = newValue
        }
    }
}

/// Observers must be Sendable (a registry may call them from any thread):
/// this one keeps its log behind a lock.
final class DummyObserver: DummyObserverProtocol, @unchecked Sendable {
    // @unchecked: `entries` is only touched while `lock` is held.
    private let lock = NSLock()
    private var entries: [String] = []
    var log: [String] { lock.withLock { entries } }
    func onFooChanged(oldValue: String, newValue: String) {
        lock.withLock { entries.append("Foo Changed from \(oldValue) to \(newValue)") }
    }
    func onBarChanged(oldValue: String, newValue: String) {
        lock.withLock { entries.append("Bar Changed from \(oldValue) to \(newValue)") }
    }
}

/// A subclass that notifies from a property observer.
class NotifyingDummy: ObservableClass {
    var value = 0 {
        didSet {
            let value = self.value
            withObservers { (observer: AlphaObserver) in observer.alpha(value) }
        }
    }
}

/// A subclass that overrides `init()`, as Flowduino's README thread does.
class CountingDummy: ObservableClass {
    let start: Int
    override init() {
        start = 10
        super.init()
    }
    func fire() {
        let start = self.start
        withObservers { (observer: AlphaObserver) in observer.alpha(start) }
    }
}

/// A subclass with a designated initializer of its own and no init().
class NamedDummy: ObservableClass {
    let name: String
    init(name: String) {
        self.name = name
        super.init()
    }
    func fire() {
        let length = name.count
        withObservers { (observer: AlphaObserver) in observer.alpha(length) }
    }
}

/// Composition: a class that cannot inherit holds a registry.
class Base {}
final class Thermostat: Base, ProtocolObservable {
    let observerRegistry = ObserverRegistry()
    var celsius = 20 {
        didSet {
            let celsius = self.celsius
            withObservers { (observer: AlphaObserver) in observer.alpha(celsius) }
        }
    }
}

final class ObservableClassTests: XCTestCase {
    func testFlowduinoReadmeUsage() {
        // Playground Code to use the above
        let observable = Dummy()  // This is the Object that we can Observe
        let observer = DummyObserver()  // This is an Object that will Observe the Observable

        observable.addObserver(observer)  // This is what registers the Observer with the Observable!
        observable.foo = "Test 1"
        observable.bar = "Test 2"
        XCTAssertEqual(
            observer.log,
            [
                "Foo Changed from Hello to Test 1",
                "Bar Changed from World to Test 2",
            ])

        observable.removeObserver(observer)
        observable.foo = "Test 3"
        XCTAssertEqual(observer.log.count, 2)
    }

    func testAnyNumberOfProtocolsPerObservable() {
        final class Multi: ObservableClass {
            func fire() {
                withObservers { (observer: AlphaObserver) in observer.alpha(1) }
                withObservers { (observer: BetaObserver) in observer.beta(2) }
                withObservers { (observer: LooseObserver) in observer.loose(3) }
            }
        }
        let multi = Multi()
        let alpha = AlphaOnly("alpha")
        let beta = BetaOnly("beta")
        let both = AlphaAndBeta("both")
        multi.addObserver([alpha, beta, both])
        multi.fire()
        XCTAssertEqual(alpha.recorded, ["alpha 1"])
        XCTAssertEqual(beta.recorded, ["beta 2"])
        XCTAssertEqual(both.recorded, ["alpha 1", "beta 2", "loose 3"])
        XCTAssertEqual(multi.observerCount, 3)
        XCTAssertEqual(multi.removeObserver([alpha, beta]), 2)
        XCTAssertEqual(multi.removeAllObservers(), 1)
    }

    func testSubclassesWithPropertyObserverAndTheirOwnInitializers() {
        let dummy = NotifyingDummy()
        let counting = CountingDummy()
        let alpha = AlphaOnly("alpha")
        dummy.addObserver(alpha)
        counting.addObserver(alpha)
        dummy.value = 4
        counting.fire()
        XCTAssertEqual(alpha.recorded, ["alpha 4", "alpha 10"])
        // A subclass with a designated initializer of its own needs no init()
        // (the base's is not `required`, as Flowduino's is not).
        let named = NamedDummy(name: "named")
        named.addObserver(alpha)
        named.fire()
        XCTAssertEqual(alpha.recorded, ["alpha 4", "alpha 10", "alpha 5"])
    }

    func testCompositionThroughProtocolObservable() {
        let thermostat = Thermostat()
        let alpha = AlphaOnly("alpha")
        thermostat.addObserver(alpha)
        thermostat.celsius = 22
        XCTAssertEqual(alpha.recorded, ["alpha 22"])
        XCTAssertTrue(thermostat.removeObserver(alpha))
        thermostat.celsius = 23
        XCTAssertEqual(alpha.recorded, ["alpha 22"])
    }

    func testObservableClassIsSafeToUseFromManyThreads() {
        let dummy = NotifyingDummy()
        let stable = (0..<16).map { AlphaOnly("stable \($0)") }
        dummy.addObserver(stable)
        let box = UncheckedBox(dummy)
        runOnThreads(3) { index in
            let dummy = box.value
            for value in 0..<500 {
                if index == 2 {
                    let transient = AlphaOnly("transient")
                    dummy.addObserver(transient)
                    dummy.removeObserver(transient)
                } else {
                    dummy.withObservers { (observer: AlphaObserver) in observer.alpha(value) }
                }
            }
        }
        for observer in stable { XCTAssertEqual(observer.callCount, 1000) }
    }
}
