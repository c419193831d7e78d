// Two processes over NATS (`make demo-nats` starts a server and runs both):
//
//   nats-demo observe --expect N   imports `weather.eu.*` into a KeyedEvent and
//                                  prints the first N temperatures that arrive
//   nats-demo publish              exports a KeyedEvent of cities to `weather`
//                                  and sends temperatures for Europe and the US
//
// The server URL comes from OBSERVER_NATS_URL (default nats://127.0.0.1:4222).
import Foundation
import ObserverNATS
import ObserverSwift

/// A key of two subject tokens, so that a wildcard can select a region.
/// (ObserverNATS needs macOS 13 / iOS 16: its options are `Duration`s.)
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct City: NATSSubjectKey, Sendable, CustomStringConvertible {
    var region: String
    var name: String

    var natsSubjectTokens: [Substring] {
        [Substring(NATSSubject.escapeToken(region)), Substring(NATSSubject.escapeToken(name))]
    }

    init(_ region: String, _ name: String) {
        self.region = region
        self.name = name
    }

    init?(natsSubjectTokens tokens: [Substring]) {
        guard tokens.count == 2, let region = NATSSubject.unescapeToken(tokens[0]),
            let name = NATSSubject.unescapeToken(tokens[1])
        else { return nil }
        self.init(region, name)
    }

    var description: String { "\(region)/\(name)" }
}

/// A count the import's handler adds to while this thread reads it.
final class Tally: @unchecked Sendable {
    // @unchecked: `count` is only touched while `lock` is held.
    private let lock = NSLock()
    private var count = 0

    /// Adds one; returns the new count.
    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("nats-demo: \(message)\n".utf8))
    exit(1)
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
func run(_ arguments: ArraySlice<String>) {
    let cities = [City("eu", "Paris"), City("us", "Boston"), City("eu", "Berlin"), City("eu", "Den Haag")]
    let url = ProcessInfo.processInfo.environment["OBSERVER_NATS_URL"] ?? "nats://127.0.0.1:4222"
    let options = NATSOptions(servers: [url], name: "nats-demo-\(arguments.first ?? "")")

    switch arguments.first {
    case "observe":
        let expected = arguments.firstIndex(of: "--expect").flatMap { Int(arguments[$0 + 1]) } ?? 6
        let bridge: NATSBridge
        do { bridge = try NATSBridge(options: options) } catch { fail("\(error)") }
        let temperatures = KeyedEvent<City, Double>()
        let done = DispatchSemaphore(value: 0)
        let arrived = Tally()
        let fromOutsideEurope = Tally()
        // Observers subscribe per key, as for any KeyedEvent: here to every city.
        let token = temperatures.forKeys(cities).subscribe { city, celsius in
            print("observer: \(city) \(celsius) °C")
            if city.region != "eu" { _ = fromOutsideEurope.increment() }
            if arrived.increment() == expected { done.signal() }
        }
        do {
            try bridge.import(prefix: "weather", matching: "eu.*", into: temperatures)
            // Tell the publisher we are listening.
            let ready = Event<Bool>()
            try bridge.export(ready, to: "weather-demo.ready")
            let announcer = Thread {
                while done.wait(timeout: .now() + 0.1) == .timedOut { ready.send(true) }
                done.signal()
            }
            announcer.start()
        } catch { fail("\(error)") }
        if done.wait(timeout: .now() + 20) == .timedOut { fail("only \(arrived.value) arrived") }
        bridge.close()  // waits for the import's handler: the counts are final
        token.cancel()
        let outside = fromOutsideEurope.value
        print("observer: \(arrived.value) temperatures arrived, \(outside) from outside Europe")
        if outside != 0 { fail("the wildcard eu.* let other regions through") }
    case "publish":
        let bridge: NATSBridge
        do { bridge = try NATSBridge(options: options) } catch { fail("\(error)") }
        let temperatures = KeyedEvent<City, Double>()
        do {
            if arguments.contains("--wait-for-observer") {
                let ready = Event<Bool>()
                let listening = DispatchSemaphore(value: 0)
                let token = ready.subscribe(limit: 1) { _ in listening.signal() }
                try bridge.import("weather-demo.ready", into: ready)
                if listening.wait(timeout: .now() + 20) == .timedOut { fail("no observer") }
                token.cancel()
            }
            try bridge.export(temperatures, keys: cities, toPrefix: "weather")
        } catch { fail("\(error)") }
        for round in 0..<2 {
            for (index, city) in cities.enumerated() {
                let celsius = Double(15 + index * 3 + round)
                print("publisher: \(city) \(celsius) °C")
                temperatures.send(celsius, forKey: city)
            }
        }
        bridge.close()  // flushes what was published
    default:
        fail("usage: nats-demo observe [--expect N] | publish [--wait-for-observer]")
    }
}

if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
    run(CommandLine.arguments.dropFirst())
} else {
    fail("needs macOS 13, iOS 16, tvOS 16 or watchOS 9 or later")
}
