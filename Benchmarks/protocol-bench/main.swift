// protocol-bench: `withObservers` of ObserverSwift against Flowduino's
// approach (a dictionary of weak references, `as?` per observer per call),
// on the same machine, in the same run.
//
//   swift run -c release --package-path Benchmarks protocol-bench [observers] [repetitions]
//
// Prints, per variant, the median time of one `withObservers` call over all
// observers (and per observer), and the ratio baseline / ObserverSwift.
import Foundation
import ObserverSwift
import ObserverSwiftCompat

protocol TickObserver: AnyObject {
    func tick(_ value: Int)
}

// @unchecked: every benchmark loop calls its observers from one thread.
final class Counter: TickObserver, @unchecked Sendable {
    var total = 0
    func tick(_ value: Int) { total &+= value }
}

/// Flowduino's `ObservableClass` storage and loop, verbatim in substance.
final class FlowduinoStyleObservable {
    struct ObserverContainer {
        weak var observer: AnyObject?
    }
    private var observers = [ObjectIdentifier: ObserverContainer]()

    func addObserver<T: AnyObject>(_ observer: T) {
        observers[ObjectIdentifier(observer)] = ObserverContainer(observer: observer)
    }

    func withObservers<T>(_ code: @escaping (_ observer: T) -> Void) {
        for (id, observation) in observers {
            guard let observer = observation.observer else {
                observers.removeValue(forKey: id)
                continue
            }
            if let typedObserver = observer as? T {
                code(typedObserver)
            }
        }
    }
}

final class Subject: ObservableClass {}

@inline(never) func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func median(_ samples: [Double]) -> Double {
    let sorted = samples.sorted()
    return sorted[sorted.count / 2]
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let observerCount = arguments.first ?? 1000
let repetitions = max(7, arguments.dropFirst().first ?? 9)
let callsPerSample = max(1, 2_000_000 / observerCount)

/// Runs `baseline` and `candidate` alternately `repetitions` times after a
/// warm-up; each sample is the mean time of one call over `callsPerSample`.
func compare(
    _ label: String, baseline: () -> Void, candidate: () -> Void
) {
    for _ in 0..<(callsPerSample / 4 + 1) {
        baseline()
        candidate()
    }
    var baselineSamples: [Double] = []
    var candidateSamples: [Double] = []
    for _ in 0..<repetitions {
        var start = nanoseconds()
        for _ in 0..<callsPerSample { baseline() }
        baselineSamples.append(Double(nanoseconds() - start) / Double(callsPerSample))
        start = nanoseconds()
        for _ in 0..<callsPerSample { candidate() }
        candidateSamples.append(Double(nanoseconds() - start) / Double(callsPerSample))
    }
    let base = median(baselineSamples)
    let ours = median(candidateSamples)
    print(label)
    print(
        String(
            format: "  Flowduino-style (dict of weak refs + as?): %10.0f ns/call  %7.2f ns/observer",
            base, base / Double(observerCount)))
    print(
        String(
            format: "  ObserverSwift withObservers:                %10.0f ns/call  %7.2f ns/observer",
            ours, ours / Double(observerCount)))
    print(
        String(
            format: "  speed-up: %.1fx (median of %d repetitions, %d calls each)", base / ours, repetitions,
            callsPerSample))
}

print("protocol-bench: \(observerCount) observers, all conforming to the protocol called")

// 1. Each side has its own observers (as in an app: nothing else holds weak
//    references to them).
do {
    let baselineObservers = (0..<observerCount).map { _ in Counter() }
    let ourObservers = (0..<observerCount).map { _ in Counter() }
    let flowduino = FlowduinoStyleObservable()
    for observer in baselineObservers { flowduino.addObserver(observer) }
    let subject = Subject()
    for observer in ourObservers { subject.addObserver(observer) }
    var value = 0
    compare(
        "observers referenced only by the observable:",
        baseline: {
            value &+= 1
            let v = value
            flowduino.withObservers { (observer: TickObserver) in observer.tick(v) }
        },
        candidate: {
            value &+= 1
            let v = value
            subject.withObservers { (observer: TickObserver) in observer.tick(v) }
        })
    let checksum = (baselineObservers + ourObservers).reduce(0) { $0 &+ $1.total }
    print("  checksum \(checksum)")
}

// 2. Both sides share the same observers, which therefore also carry weak
//    references (Swift side tables) on our side.
do {
    let observers = (0..<observerCount).map { _ in Counter() }
    let flowduino = FlowduinoStyleObservable()
    let subject = Subject()
    for observer in observers {
        flowduino.addObserver(observer)
        subject.addObserver(observer)
    }
    var value = 0
    compare(
        "same observers, also weakly referenced elsewhere:",
        baseline: {
            value &+= 1
            let v = value
            flowduino.withObservers { (observer: TickObserver) in observer.tick(v) }
        },
        candidate: {
            value &+= 1
            let v = value
            subject.withObservers { (observer: TickObserver) in observer.tick(v) }
        })
    print("  checksum \(observers.reduce(0) { $0 &+ $1.total })")
}
