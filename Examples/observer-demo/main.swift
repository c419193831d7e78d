// `make demo`: a tour of ObserverSwift that prints what it observed.
import Foundation
import ObserverSwift

func section(_ title: String) { print("\n== \(title)") }

// MARK: Event: targets, tokens, limits, reentrancy

final class Inbox {
    let didReceive = Event<String>()
}

final class InboxView {
    var lines: [String] = []
}

func eventTour() {
    section("Event")
    let inbox = Inbox()
    var view: InboxView? = InboxView()
    inbox.didReceive.subscribe(view!) { view, message in view.lines.append(message) }
    let token = inbox.didReceive.subscribe { message in print("closure got:", message) }
    inbox.didReceive.subscribeOnce { message in print("once:", message) }
    inbox.didReceive.send("hello")
    inbox.didReceive.trigger("again")
    print("view saw:", view!.lines)
    print("subscribers:", inbox.didReceive.subscribersCount, "triggers:", inbox.didReceive.triggersCount)
    token.cancel()
    print("cancel twice is a no-op:", token.cancel())
    view = nil
    inbox.didReceive.send("after the view is gone")
    print("subscribers after cancel + dealloc:", inbox.didReceive.subscribersCount)

    // Many threads at once: every delivery counted.
    let counter = Event<Int>()
    let total = Counter()
    for _ in 0..<100 { counter.subscribe { total.add($0) } }
    DispatchQueue.concurrentPerform(iterations: 2) { _ in
        for _ in 0..<10_000 { counter.send(1) }
    }
    print("2 threads x 10,000 sends x 100 observers =", total.value, "deliveries")
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var total = 0
    func add(_ value: Int) { lock.withLock { total += value } }
    var value: Int { lock.withLock { total } }
}

// MARK: Observable values

func valueTour() {
    section("ObservableValue")
    let name = ObservableValue("Ada")
    let token = name.addObserver(replay: true) { print("name is", $0) }
    name.value = "Grace"
    name <<< "Barbara"
    name.removeObserver(token)
    name.value = "(not printed)"
    print("observers:", name.observersCount, "triggers:", name.triggersCount)
}

// MARK: Producer streams

func streamTour() {
    section("IndefiniteObservable")
    let clicks = Event<Int>()
    let stream = ValueObservable<Int> { observer in
        observer.next(0)
        let token = clicks.subscribe { observer.next($0) }
        return {
            print("disconnected")
            token.cancel()
        }
    }
    let subscription = stream.subscribe { print("click", $0) }
    clicks.send(1)
    subscription.unsubscribe()
    subscription.unsubscribe()
}

// MARK: NotificationCenter and key paths

extension Notification.Name {
    static let demoWave = Notification.Name("demo.wave")
}

final class Document: KeyPathObservable {
    @ObservableProperty var title = "Untitled"
}

func foundationTour() {
    section("NotificationObserver")
    let observer = NotificationObserver(forName: .demoWave, queue: nil, activate: true) { note in
        print("wave from", note.object ?? "nobody")
    }
    Notification.Name.demoWave.post()
    NotificationCenter.post(.demoWave, object: "Ada")
    observer.deactivate()
    Notification.Name.demoWave.post()
    print("active:", observer.isActive)

    section("Key-path observation")
    let document = Document()
    let titleObserver = document.observe(\.$title) { old, new in print("title:", old, "->", new) }
    document.title = "Draft"
    titleObserver.deactivate()
    document.title = "Final"
}

// MARK: Protocol-typed and keyed observers

protocol TemperatureObserving: AnyObject {
    func temperatureChanged(to celsius: Double)
}

final class Thermometer: KeyedObservableClass {}

final class Display: TemperatureObserving {
    let name: String
    init(_ name: String) { self.name = name }
    func temperatureChanged(to celsius: Double) { print("\(name) shows \(celsius) °C") }
}

func protocolTour() {
    section("ObservableClass / KeyedObservableClass")
    let thermometer = Thermometer()
    let hall = Display("hall")
    let kitchen = Display("kitchen")
    thermometer.addObserver(hall)
    thermometer.withObservers { (observer: TemperatureObserving) in observer.temperatureChanged(to: 21.5) }
    thermometer.addKeyedObserver(key: "kitchen", kitchen)
    thermometer.withKeyedObservers(key: "kitchen") { (room: String, observer: TemperatureObserving) in
        observer.temperatureChanged(to: 23)
    }

    section("KeyedEvent")
    let quotes = KeyedEvent<String, Double>()
    quotes.subscribe(key: "ACME") { print("ACME at", $0) }
    quotes.send(12.5, forKey: "ACME")
    quotes.send(99, forKey: "OTHER")
    print("keys:", quotes.keysCount)
}

eventTour()
valueTour()
protocolTour()
streamTour()
foundationTour()

section("Core")
try ObserverCore.reclaimNow()
let statistics = ObserverCore.statistics
print("pending after reclaimNow:", statistics.pendingObjects, "reclaimed so far:", statistics.reclaimedObjects)
