import Foundation
import ObserverSwift

final class Sink { var total = 0 }

@inline(never) func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func measure(_ label: String, n: Int, reps: Int = 9, _ body: (Int) -> Void) -> Double {
    let sendsPerRep = max(1, 2_000_000 / max(n, 1))
    body(sendsPerRep / 4 + 1)  // warm-up
    var samples: [Double] = []
    for _ in 0..<reps {
        let t0 = now()
        body(sendsPerRep)
        let t1 = now()
        samples.append(Double(t1 - t0) / Double(sendsPerRep * max(n, 1)))
    }
    samples.sort()
    let median = samples[samples.count / 2]
    print(String(format: "%-28@ N=%-6d %7.2f ns", label as NSString, n, median))
    return median
}

final class WeakBox { weak var target: Sink?; let handler: (Sink, Int) -> Void
    init(_ t: Sink, _ h: @escaping (Sink, Int) -> Void) { target = t; handler = h } }

func run() {
    for n in [1, 100, 1000, 10000] {
        let sink = Sink()
        var raw: [(Int) -> Void] = []
        for _ in 0..<n { raw.append { v in sink.total &+= v } }
        let rawClosures = raw
        _ = measure("raw [(Int)->Void]", n: n) { k in for i in 0..<k { for f in rawClosures { f(i) } } }
        let event = Event<Int>()
        for _ in 0..<n { event.subscribe { v in sink.total &+= v } }
        _ = measure("Event closure", n: n) { k in for i in 0..<k { event.send(i) } }
        let targets = (0..<n).map { _ in Sink() }
        var weak: [WeakBox] = []
        for t in targets { weak.append(WeakBox(t) { s, v in s.total &+= v }) }
        let weakBoxes = weak
        _ = measure("weak load + call", n: n) { k in for i in 0..<k { for b in weakBoxes { if let t = b.target { b.handler(t, i) } } } }
        let wevent = Event<Int>()
        for t in targets { wevent.subscribe(t) { s, v in s.total &+= v } }
        _ = measure("Event weak target", n: n) { k in for i in 0..<k { wevent.send(i) } }
        withExtendedLifetime(targets) {}
        print("checksum", sink.total &+ targets.reduce(0) { $0 &+ $1.total })
    }

    let empty = Event<Int>()
    _ = measure("empty send (ns/send)", n: 0) { k in for i in 0..<k { empty.send(i) } }
}
if CommandLine.arguments.dropFirst().first == "empty" {
    let e = Event<Int>()
    for _ in 0..<20 { _ = measure("empty send (ns/send)", n: 0) { k in for i in 0..<k { e.send(i) } } }
} else {
    run()
}
