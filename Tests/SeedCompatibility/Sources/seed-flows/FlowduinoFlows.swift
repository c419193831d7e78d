import Foundation
import ObserverSwiftCompat

// Flowduino/Observable's README (2.0.0), against ObserverSwiftCompat with no
// change for ObserverSwift. The thread's `init()` does not compile as printed,
// against Flowduino either: it overrides ObservableThread's `init()` without
// `override` and calls `self.start()` before `super.init()`, so it has both,
// as a Flowduino user's must. `objectWillChange.send()` needs Combine, which
// Linux lacks. The observers record what they receive (besides the README's
// printing, for the thread) so that the flow can check it.

/// Protocol defining what Methods the Obverable Class can invoke on any Observer
protocol DummyObservable: AnyObject {  // It's extremely important that this Protocol be constrained to AnyObject
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
            withObservers { (observer: DummyObservable) in
                observer.onFooChanged(oldValue: _foo, newValue: newValue)
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
            withObservers { (observer: DummyObservable) in
                observer.onBarChanged(oldValue: _bar, newValue: newValue)
            }
            _bar = newValue
        }
    }
}

class DummyObserver: DummyObservable {
    var changes: [String] = []
    /* Implementations for DummyObservable */
    func onFooChanged(oldValue: String, newValue: String) {
        changes.append("Foo Changed from \(oldValue) to \(newValue)")
    }

    func onBarChanged(oldValue: String, newValue: String) {
        changes.append("Bar Changed from \(oldValue) to \(newValue)")
    }
}

protocol RandomNumberObserver: AnyObject {
    func onRandomNumber(_ randomNumber: Int)
}

class RandomNumberObservableThread: ObservableThread {
    override init() {
        super.init()
        self.start()  // This will start the thread on creation.
    }

    public override func main() {  // We must override this method
        while self.isExecuting {  // This creates a loop that will continue for as long as the Thread is running!
            let randomNumber = Int.random(in: -9000..<9001)  // We'll generate a random number between -9000 and +9000
            // Now let's notify all of our Observers!
            withObservers { (observer: RandomNumberObserver) in
                observer.onRandomNumber(randomNumber)
            }
            Self.sleep(forTimeInterval: 60.00)  // This will cause our Thread to sleep for 60 seconds
        }
    }
}

class RandomNumberObserverClass: RandomNumberObserver {
    let received = DispatchSemaphore(value: 0)
    public func onRandomNumber(_ randomNumber: Int) {
        print("Random Number is: \(randomNumber)")
        received.signal()
    }
}

protocol ObserverProtocolA: AnyObject {
    func doSomethingForProtocolA()
}

protocol ObserverProtocolB: AnyObject {
    func doSomethingForProtocolB()
}

class TwoProtocols: ObservableThreadSafeClass {
    func notifyBoth() {
        withObservers { (observer: ObserverProtocolA) in
            observer.doSomethingForProtocolA()
        }

        withObservers { (observer: ObserverProtocolB) in
            observer.doSomethingForProtocolB()
        }
    }
}

class OnlyA: ObserverProtocolA {
    var calls = 0
    func doSomethingForProtocolA() { calls += 1 }
}

// Flowduino 2.0's keyed observers as its README uses them: the key type is
// inferred at each call, `withKeyedObservers(key:)`, `addKeyedObserver(key:)`
// and `addKeyedObserver(keys:)`.
protocol StockObservable: AnyObject {
    func onPriceChanged(symbol: String, oldPrice: Int, newPrice: Int)
}

class StockBoard: KeyedObservableClass {
    private var prices: [String: Int] = ["AAA": 10, "BBB": 20, "CCC": 30]

    func setPrice(symbol: String, price: Int) {
        withKeyedObservers(key: symbol) { (symbol, observer: StockObservable) in
            observer.onPriceChanged(symbol: symbol, oldPrice: self.prices[symbol]!, newPrice: price)
        }
        self.prices[symbol] = price
    }
}

class StockWatcher: StockObservable {
    var seen: [String] = []
    func onPriceChanged(symbol: String, oldPrice: Int, newPrice: Int) {
        seen.append("\(symbol) \(oldPrice) -> \(newPrice)")
    }
}

func flowduinoFlows() {
    // Playground Code to use the above
    let observable = Dummy()  // This is the Object that we can Observe
    let observer = DummyObserver()  // This is an Object that will Observe the Observable

    observable.addObserver(observer)  // This is what registers the Observer with the Observable!
    observable.foo = "Test 1"
    observable.bar = "Test 2"
    check(
        observer.changes == ["Foo Changed from Hello to Test 1", "Bar Changed from World to Test 2"],
        "Flowduino ObservableClass")

    let myThread = RandomNumberObservableThread()
    let myObserver = RandomNumberObserverClass()
    myThread.addObserver(myObserver)
    myThread.notifyChange()  // cuts the 60 s sleep short, so the test does not wait for it
    check(myObserver.received.wait(timeout: .now() + 70) == .success, "Flowduino ObservableThread")
    myThread.cancel()
    check(myThread.waitUntilFinished(timeout: 10), "Flowduino ObservableThread stops on cancel")

    let both = TwoProtocols()
    let onlyA = OnlyA()
    both.addObserver(onlyA)
    both.notifyBoth()
    check(onlyA.calls == 1, "Flowduino observers are called only for the protocols they conform to")

    let board = StockBoard()
    let watcher = StockWatcher()
    let single = StockWatcher()
    board.addKeyedObserver(keys: ["AAA", "BBB"], watcher)
    board.addKeyedObserver(key: "CCC", single)
    board.setPrice(symbol: "AAA", price: 11)
    board.setPrice(symbol: "CCC", price: 31)
    board.removeKeyedObserver(key: "AAA", watcher)
    board.setPrice(symbol: "AAA", price: 12)
    board.setPrice(symbol: "BBB", price: 21)
    check(watcher.seen == ["AAA 10 -> 11", "BBB 20 -> 21"], "Flowduino KeyedObservableClass, keys:")
    check(single.seen == ["CCC 30 -> 31"], "Flowduino KeyedObservableClass, key:")
}
