// keyed-bench: the cost of KeyedEvent.send(_:forKey:) with 1,000,000 keys,
// one closure observer each, against a same-run baseline: a Swift
// dictionary of closure arrays behind a Mutex (what a keyed observable
// without the core would do).
//
//   swift run -c release --package-path Benchmarks keyed-bench                # 1,000,000 keys
//   swift run -c release --package-path Benchmarks keyed-bench 100000         # another key count
//   swift run -c release --package-path Benchmarks keyed-bench 1000000 hot    # hot-key send only (perf)
//
// Each figure is the median of 9 timed repetitions after a warm-up, in
// nanoseconds per send (one delivery per send), as thread CPU time (the
// machine may be shared) and as wall time.
import Foundation
import ObserverSwift
import Synchronization

final class Sink: @unchecked Sendable { var total = 0 }

@inline(never) func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// CPU time of the calling thread: unlike wall time, it excludes the time
/// the thread spent descheduled (this machine is shared).
@inline(never) func threadCPUTime() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Runs `body(count)` once to warm up, then `repetitions` times timed;
/// prints the medians of wall time and of thread CPU time per send.
func measure(_ label: String, sends: Int, repetitions: Int = 9, _ body: (Int) -> Void) -> Double {
    body(sends / 4 + 1)
    var wall: [Double] = []
    var cpu: [Double] = []
    for _ in 0..<repetitions {
        let start = now()
        let startCPU = threadCPUTime()
        body(sends)
        cpu.append(Double(threadCPUTime() - startCPU) / Double(sends))
        wall.append(Double(now() - start) / Double(sends))
    }
    wall.sort()
    cpu.sort()
    let median = cpu[cpu.count / 2]
    print(
        String(
            format: "%-44@ cpu median %7.2f ns/send (min %6.2f)   wall median %7.2f (min %6.2f)   %d reps",
            label as NSString, median, cpu.first!, wall[wall.count / 2], wall.first!, repetitions))
    return median
}

let keyCount = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1_000_000
let hotKey = keyCount / 2
let sink = Sink()

// A fixed pseudo-random walk over all keys (same sequence for both sides).
var generator = UInt64(0x9E37_79B9_7F4A_7C15)
let randomKeys: [Int] = (0..<(1 << 20)).map { _ in
    generator = generator &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return Int((generator >> 33) % UInt64(keyCount))
}

print("keyed-bench: \(keyCount) keys, one observer each")

// KeyedEvent through the core.
var setupStart = now()
let event = KeyedEvent<Int, Int>()
for key in 0..<keyCount {
    _ = event.subscribe(key: key) { value in sink.total &+= value }
}
print(String(format: "setup KeyedEvent: %.2f s, %d keys", Double(now() - setupStart) / 1e9, event.keyCount))

// Baseline: dictionary of closure arrays behind a Mutex.
setupStart = now()
let baseline = Mutex<[Int: [@Sendable (Int) -> Void]]>([:])
let baselineSink = sink
baseline.withLock { table in
    table.reserveCapacity(keyCount)
    for key in 0..<keyCount { table[key, default: []].append { value in baselineSink.total &+= value } }
}
print(String(format: "setup baseline:   %.2f s", Double(now() - setupStart) / 1e9))

@inline(never)
func baselineSend(_ value: Int, forKey key: Int) {
    baseline.withLock { table in
        if let handlers = table[key] {
            for handler in handlers { handler(value) }
        }
    }
}

let sends = 4_000_000
// `keyed-bench <keys> hot` measures only the hot-key send (for profiling).
if CommandLine.arguments.count > 2, CommandLine.arguments[2] == "hot" {
    for _ in 0..<5 {
        _ = measure("KeyedEvent.send, one key of \(keyCount)", sends: sends) { count in
            for index in 0..<count { event.send(index, forKey: hotKey) }
        }
    }
    exit(0)
}
for round in 1...2 {
    print("-- round \(round)")
    _ = measure("KeyedEvent.send, one key of \(keyCount)", sends: sends) { count in
        for index in 0..<count { event.send(index, forKey: hotKey) }
    }
    _ = measure("baseline Mutex<[Key: [closure]]>, one key", sends: sends) { count in
        for index in 0..<count { baselineSend(index, forKey: hotKey) }
    }
    _ = measure("KeyedEvent.send, key without observers", sends: sends) { count in
        for index in 0..<count { event.send(index, forKey: -1) }
    }
    _ = measure("baseline, key without observers", sends: sends) { count in
        for index in 0..<count { baselineSend(index, forKey: -1) }
    }
    let mask = randomKeys.count - 1
    _ = measure("KeyedEvent.send, random key each send", sends: sends / 4) { count in
        for index in 0..<count { event.send(index, forKey: randomKeys[index & mask]) }
    }
    _ = measure("baseline, random key each send", sends: sends / 4) { count in
        for index in 0..<count { baselineSend(index, forKey: randomKeys[index & mask]) }
    }
}
print("checksum \(sink.total)")
withExtendedLifetime(event) {}
