import Foundation
import ObserverSwiftCompat

// HSObserver's README with its own names (ObserverSwiftCompat's aliases of
// `NotificationObserver` / `HasObservers`), an NSViewController replaced by a
// plain class, and `queue: nil` (delivery on the posting thread) so that a
// command-line program sees the calls without running the main queue. Its
// posting section's `Watcher` (names in a `Notif` struct) is merged into the
// first one.

class Watcher {
    struct Notif {
        static let wave = NSNotification.Name.init("waveNotification")
    }
    static let wave = NSNotification.Name.init("waveNotification")
    static let hello = NSNotification.Name.init("helloNotification")

    var waves = 0
    var waveObserver: HSObserver!
    init() {
        waveObserver = HSObserver.init(
            forName: Watcher.wave,
            queue: nil,
            activate: true,
            using: { [weak self] (notif) in
                self?.waves += 1
            })
    }

    func doPosting() {
        Watcher.Notif.wave.post()
        //or
        Watcher.Notif.wave.post(object: self, userInfo: ["Foo": "Bar"])
    }
}

class ViewController: HSHasObservers {
    var calls = 0

    func viewDidLoad() {
        //Add manually
        let waveObserver = HSObserver.init(
            forName: Watcher.wave, queue: nil,
            using: { [weak self] (notif) in
                self?.calls += 1
            })
        self.add(observer: waveObserver)

        //Or by chaining
        HSObserver.init(
            forName: Watcher.hello, queue: nil,
            using: { [weak self] (notif) in
                self?.calls += 10
            }
        ).add(to: self)
    }

    func viewWillAppear() { activateObservers() }
    func viewDidDisappear() { deactivateObservers() }
}

func hsObserverFlows() {
    let watcher = Watcher()
    NotificationCenter.default.post(name: Watcher.wave, object: nil)
    check(watcher.waves == 1, "HSObserver activate: true")

    NotificationCenter.post(Watcher.Notif.wave)
    check(watcher.waves == 2, "HSObserver NotificationCenter.post(_:)")
    watcher.doPosting()
    check(watcher.waves == 4, "HSObserver Notif.wave.post()")

    let controller = ViewController()
    controller.viewDidLoad()
    NotificationCenter.default.post(name: Watcher.wave, object: nil)
    controller.viewWillAppear()
    NotificationCenter.default.post(name: Watcher.wave, object: nil)
    NotificationCenter.default.post(name: Watcher.hello, object: nil)
    controller.viewDidDisappear()
    NotificationCenter.default.post(name: Watcher.hello, object: nil)
    check(controller.calls == 11, "HSHasObservers activate / deactivate")

    var many = 0
    let manyThingsObserver = HSObserver.init(
        forNames: [Watcher.wave, Watcher.hello], queue: nil,
        activate: true,
        using: { (notif) in
            many += 1
        })
    NotificationCenter.default.post(name: Watcher.wave, object: nil)
    NotificationCenter.default.post(name: Watcher.hello, object: nil)
    withExtendedLifetime(manyThingsObserver) {}
    check(many == 2, "HSObserver forNames")
}
