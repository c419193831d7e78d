// `make demo`: a tour of ObserverSwift that prints what it observed.
import Foundation
import ObserverSwiftCompat  // ObserverSwift, and the producer streams of the tour's last part

func section(_ title: String) { print("\n== \(title)") }

// MARK: Event: targets, tokens, limits, reentrancy

final class Inbox {
    let didReceive = Event<String>()
}

/// Sends may come from any thread, so a weak target is `Sendable`: here its
/// state is behind a lock.
final class InboxView: Sendable {
    private let storage = NSLock()
    nonisolated(unsafe) private var stored: [String] = []
    func append(_ line: String) { storage.withLock { stored.append(line) } }
    var lines: [String] { storage.withLock { stored } }
}

func eventTour() {
    section("Event")
    let inbox = Inbox()
    var view: InboxView? = InboxView()
    inbox.didReceive.subscribe(view!) { view, message in view.append(message) }
    let token = inbox.didReceive.subscribe { message in print("closure got:", message) }
    _ = inbox.didReceive.subscribe(limit: 1) { message in print("once:", message) }
    // An actor observes with a handler isolated to it.
    let tally = Tally()
    inbox.didReceive.subscribe(isolatedTo: tally) { tally, message in tally.count(message) }
    inbox.didReceive.send("hello")
    inbox.didReceive.send("again")
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
    let bag = SubscriptionBag()
    for _ in 0..<100 { counter.subscribe { total.add($0) }.store(in: bag) }
    DispatchQueue.concurrentPerform(iterations: 2) { _ in
        for _ in 0..<10_000 { counter.send(1) }
    }
    print("2 threads x 10,000 sends x 100 observers =", total.value, "deliveries")
}

actor Tally {
    private var messages = 0
    func count(_ message: String) { messages += 1 }
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
    let token = name.replaying.subscribe { print("name is", $0) }
    name.value = "Grace"
    name.value = "Barbara"
    token.cancel()
    name.value = "(not printed)"
    print("subscribers:", name.subscribersCount, "triggers:", name.triggersCount)
}

// MARK: Producer streams

func streamTour() {
    section("IndefiniteObservable (ObserverSwiftCompat)")
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
    Notification.Name.demoWave.post(object: "Ada")
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

final class Display: TemperatureObserving, Sendable {
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
    let quote = quotes.subscribe(key: "ACME") { print("ACME at", $0) }
    quotes.send(12.5, forKey: "ACME")
    quote.cancel()
    quotes.send(99, forKey: "OTHER")
    print("keys:", quotes.keyCount)
}

eventTour()
valueTour()
protocolTour()
streamTour()
foundationTour()

section("Core")
let statistics = ObserverCore.statistics
print("live subscriptions:", statistics.liveSubscriptions, "reclaimed so far:", statistics.reclaimedObjects)
