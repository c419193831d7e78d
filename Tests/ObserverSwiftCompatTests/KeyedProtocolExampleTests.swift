import Foundation
import ObserverSwiftCompat
import XCTest

// What the Keyed observers guide's protocol-observer examples state
// (KeyedObservableClass, KeyedObservableThread: who is called, with what),
// checked with the same types, namespaced so their names do not clash with
// other tests. The guide's code itself is compiled by `make snippets`.

enum KeyedProtocolExample {
    protocol SettingObserver: AnyObject {
        func settingChanged(key: String, from oldValue: String, to newValue: String)
    }

    class Settings: KeyedObservableClass {  // or KeyedObservableThreadSafeClass: the same class
        private var values = ["theme": "light", "language": "en"]
        func set(_ key: String, to value: String) {
            withKeyedObservers(key: key) { (key, observer: SettingObserver) in
                observer.settingChanged(key: key, from: self.values[key] ?? "", to: value)
            }
            values[key] = value
        }
    }

    // Observers must be Sendable (they may be called from any thread): this
    // one keeps its lines behind a lock.
    final class SettingLog: SettingObserver, @unchecked Sendable {
        // @unchecked: `recorded` is only touched while `lock` is held.
        private let lock = NSLock()
        private var recorded: [String] = []
        var lines: [String] { lock.withLock { recorded } }
        func settingChanged(key: String, from oldValue: String, to newValue: String) {
            lock.withLock { recorded.append("\(key): \(oldValue) → \(newValue)") }
        }
    }

    protocol SensorObserver: AnyObject {
        func reading(sensor: String, celsius: Double)
    }

    class SensorPoller: KeyedObservableThread {
        override func main() {
            while isExecuting {
                for sensor in ["boiler", "attic"] {
                    let celsius = Double.random(in: 15...25)
                    withKeyedObservers(key: sensor) { (sensor, observer: SensorObserver) in
                        observer.reading(sensor: sensor, celsius: celsius)
                    }
                }
                Self.sleep(forTimeInterval: 60)
            }
        }
    }

    final class BoilerGauge: SensorObserver, @unchecked Sendable {
        // @unchecked: test only; read after join().
        var sensors: [String] = []
        let received = DispatchSemaphore(value: 0)
        func reading(sensor: String, celsius: Double) {
            sensors.append(sensor)
            received.signal()
        }
    }
}

final class KeyedProtocolExampleTests: XCTestCase {
    func testTourKeyedObservableClass() {
        typealias T = KeyedProtocolExample
        let settings = T.Settings()
        let themeLog = T.SettingLog()
        let allLog = T.SettingLog()
        settings.addKeyedObserver(key: "theme", themeLog)  // one key; held weakly
        settings.addKeyedObserver(keys: ["theme", "language"], allLog)  // several keys; arrays of observers too
        settings.set("theme", to: "dark")  // themeLog and allLog
        settings.set("language", to: "fr")  // allLog only
        settings.set("font", to: "mono")  // nobody: a hash and one probe
        settings.removeKeyedObserver(key: "theme", allLog)  // or keys: [...], or [observers]
        settings.set("theme", to: "light")  // themeLog only
        XCTAssertEqual(themeLog.lines, ["theme: light → dark", "theme: dark → light"])
        XCTAssertEqual(allLog.lines, ["theme: light → dark", "language: en → fr"])
    }

    func testTourKeyedObservableThread() {
        typealias T = KeyedProtocolExample
        let poller = T.SensorPoller()
        let boilerGauge = T.BoilerGauge()
        poller.addKeyedObserver(key: "boiler", boilerGauge)
        poller.start()
        XCTAssertEqual(boilerGauge.received.wait(timeout: .now() + 30), .success)
        poller.cancel()
        poller.join()
        XCTAssertEqual(boilerGauge.sensors, ["boiler"], "one loop (the sleep was cut by cancel), boiler only")
    }
}
