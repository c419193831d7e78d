// Flowduino's subclasses, as they compile against Flowduino: the base classes'
// `init()` is not `required`, so a subclass overrides it with `override init()`
// (Flowduino's README thread) or declares a designated initializer of its own
// without also providing `init()`.
import ObserverSwiftCompat

protocol TickObserver: AnyObject {
    func tick(_ count: Int)
}

class SelfStartingThread: ObservableThread {
    override init() {
        super.init()
        self.start()
    }

    override func main() {
        withObservers { (observer: TickObserver) in observer.tick(1) }
    }
}

class IntervalThread: KeyedObservableThread {
    let interval: Double
    init(interval: Double) {
        self.interval = interval
        super.init()
    }
}

class Counter: ObservableClass {
    let start: Int
    init(start: Int) {
        self.start = start
        super.init()
    }
}

class Repository: KeyedObservableClass {
    var models: [String: Int] = [:]
    override init() {
        models["first"] = 1
        super.init()
    }
}

let thread = SelfStartingThread()
_ = thread.waitUntilFinished(timeout: 1)
print(IntervalThread(interval: 1).interval, Counter(start: 3).start, Repository().models.count)
