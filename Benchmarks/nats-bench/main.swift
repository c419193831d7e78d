// The NATS bridge against raw cnats, side by side in one run (`make bench`
// starts a nats-server for it; `make bench-nats` runs this part alone).
//
//   throughput  exported Event<Int> -> imported Event<Int> on another connection,
//               vs a raw cnats publish/subscribe loop in C (16-byte payloads)
//   latency     immediate mode: send -> remote handler -> reply event, vs a raw
//               cnats request/reply with SendAsap in C; p50 and p99
//   local send  Event<Int>.send with one closure observer, unexported vs
//               exported, next to the raw cnats publish call of the same frame
//   batching    16-byte events (a value of two Int64s) export -> import with
//               NATSOptions.batching on and off, vs the raw cnats pub/sub loop
//               with 16-byte payloads; and send-to-delivery latency (p50, p99)
//               at full rate and at a low rate (one event every 2 ms)
//
// Release build, one warm-up run of each, then the median of repeated runs.
// `--quick` runs smaller counts (a smoke test); `--only throughput|latency|local|batching`
// runs one part; `--only bridge-throughput` and `--only raw-throughput` run one
// throughput loop alone (for profiling).
import CNATSBaselines
import Dispatch
import Foundation
import ObserverNATS
import ObserverSwift
import Synchronization

let quick = CommandLine.arguments.contains("--quick")
let repetitions = quick ? 3 : 7
let only: String? = CommandLine.arguments.firstIndex(of: "--only").flatMap { index in
    CommandLine.arguments.indices.contains(index + 1) ? CommandLine.arguments[index + 1] : nil
}
func selected(_ part: String) -> Bool { only == nil || only == part }
guard let url = ProcessInfo.processInfo.environment["OBSERVER_NATS_URL"] else {
    print("nats-bench: set OBSERVER_NATS_URL, or run `make bench-nats` (it starts a nats-server)")
    exit(1)
}
let payloadSize = 16
/// What the bridge puts on the wire for one Int: the 18-byte frame header and 8 bytes.
let frameSize = 18 + 8

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

/// The C loops' clock (CLOCK_MONOTONIC), so that a timestamp costs both sides the same.
@Sendable func nanoseconds() -> Int64 {
    nbl_now_ns()
}

func bridge(_ latency: NATSOptions.Latency, batching: NATSOptions.Batching = .off) -> NATSBridge {
    var options = NATSOptions(servers: [url])
    options.latency = latency
    options.batching = batching
    options.pendingLimits = .init(messages: 10_000_000, bytes: 1 << 30)
    do { return try NATSBridge(options: options) } catch {
        print("nats-bench: cannot connect to \(url): \(error)")
        exit(1)
    }
}

/// A fresh subject per run. Loops compared with each other use one name, and the run
/// number has a fixed width: cnats and the server parse subjects byte by byte, so a
/// longer subject alone made a loop measurably slower.
let runs = Atomic<Int>(0)
func uniqueSubject(_ name: String) -> String {
    let run = runs.add(1, ordering: .relaxed).newValue
    return "bench.\(name).\(ProcessInfo.processInfo.processIdentifier).\(String(format: "%06d", run))"
}

// MARK: Throughput

func rawThroughput(count: Int, bytes: Int = payloadSize) -> Double {
    let rate = nbl_publish_subscribe_rate(url, uniqueSubject("throughput"), Int32(count), Int32(bytes), 0)
    if rate < 0 {
        print("nats-bench: the raw publish/subscribe loop failed")
        exit(1)
    }
    return rate
}

func bridgeThroughput(count: Int) -> Double {
    let publisher = bridge(.batched)
    let subscriber = bridge(.batched)
    defer {
        publisher.close()
        subscriber.close()
    }
    let subject = uniqueSubject("throughput")
    let local = Event<Int>()
    let remote = Event<Int>()
    let received = Atomic<Int>(0)
    let lastArrival = Atomic<Int64>(0)
    let token = remote.subscribe { _ in
        lastArrival.store(nanoseconds(), ordering: .relaxed)
        received.add(1, ordering: .relaxed)
    }
    defer { token.cancel() }
    do {
        try publisher.export(local, to: subject)
        try subscriber.import(subject, into: remote)
    } catch {
        print("nats-bench: \(error)")
        exit(1)
    }
    let started = nanoseconds()
    for value in 0..<count { local.send(value) }
    let deadline = nanoseconds() + 60_000_000_000
    while received.load(ordering: .relaxed) < count && nanoseconds() < deadline { usleep(200) }
    guard received.load(ordering: .relaxed) == count else {
        print("nats-bench: the bridge delivered \(received.load(ordering: .relaxed)) of \(count)")
        exit(1)
    }
    return Double(count) / (Double(lastArrival.load(ordering: .relaxed) - started) / 1e9)
}

// MARK: Latency

func rawRoundTrips(count: Int) -> [Double] {
    var samples = [Double](repeating: 0, count: count)
    guard nbl_request_reply(url, uniqueSubject("request"), Int32(count), Int32(payloadSize), &samples) == 0 else {
        print("nats-bench: the raw request/reply loop failed")
        exit(1)
    }
    return samples
}

func bridgeRoundTrips(count: Int) -> [Double] {
    let client = bridge(.immediate)
    let server = bridge(.immediate)
    defer {
        client.close()
        server.close()
    }
    let pingSubject = uniqueSubject("request")
    let pongSubject = uniqueSubject("reply")
    let ping = Event<Int>()
    let pong = Event<Int>()
    let serverPing = Event<Int>()
    let serverPong = Event<Int>()
    let replied = DispatchSemaphore(value: 0)
    let tokens = [
        pong.subscribe { _ in replied.signal() },
        serverPing.subscribe { value in serverPong.send(value) },
    ]
    defer { tokens.forEach { $0.cancel() } }
    do {
        try client.export(ping, to: pingSubject)
        try client.import(pongSubject, into: pong)
        try server.import(pingSubject, into: serverPing)
        try server.export(serverPong, to: pongSubject)
    } catch {
        print("nats-bench: \(error)")
        exit(1)
    }
    var samples: [Double] = []
    samples.reserveCapacity(count)
    for value in 0..<count {
        let started = nanoseconds()
        ping.send(value)
        guard replied.wait(timeout: .now() + 5) == .success else {
            print("nats-bench: no reply in 5 s")
            exit(1)
        }
        samples.append(Double(nanoseconds() - started))
    }
    return samples
}

// MARK: Local send

final class Sink: Sendable {
    let total = Atomic<Int>(0)
}

func localSendCost(count: Int, exported: Bool) -> Double {
    let publisher = bridge(.batched)
    defer { publisher.close() }
    let event = Event<Int>()
    let sink = Sink()
    let token = event.subscribe { value in sink.total.add(value, ordering: .relaxed) }
    defer { token.cancel() }
    if exported {
        do { try publisher.export(event, to: uniqueSubject("unheard")) } catch {
            print("nats-bench: \(error)")
            exit(1)
        }
    }
    let started = nanoseconds()
    for value in 0..<count { event.send(value) }
    return Double(nanoseconds() - started) / Double(count)
}

func rawPublishCallCost(count: Int) -> Double {
    let cost = nbl_publish_call_ns(url, uniqueSubject("unheard"), Int32(count), Int32(frameSize))
    if cost < 0 {
        print("nats-bench: the raw publish loop failed")
        exit(1)
    }
    return cost
}

// MARK: Batching

/// A 16-byte event: when it was sent (the benchmark's clock) and its index.
struct StampedEvent: NATSWireValue, Sendable {
    static var natsWireTag: UInt8 { 100 }
    var sentAt: Int64
    var index: Int64
    var natsWireSize: Int { 16 }

    init(sentAt: Int64, index: Int64) {
        self.sentAt = sentAt
        self.index = index
    }

    func natsEncode(into buffer: UnsafeMutableRawBufferPointer) {
        buffer.storeBytes(of: sentAt.littleEndian, as: Int64.self)
        buffer.storeBytes(of: index.littleEndian, toByteOffset: 8, as: Int64.self)
    }

    init(natsWire bytes: UnsafeRawBufferPointer) throws(NATSWireError) {
        guard bytes.count == 16 else { throw .wrongSize(expected: 16, actual: bytes.count) }
        sentAt = Int64(littleEndian: bytes.loadUnaligned(as: Int64.self))
        index = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: Int64.self))
    }
}

/// Each event's send-to-delivery time, written by the import's delivery thread only.
final class LatencyRecord: @unchecked Sendable {
    // @unchecked: each slot is written once, by the delivery thread, before `received` is
    // incremented (releasing); the reader reads after loading the final count (acquiring).
    let samples: UnsafeMutableBufferPointer<Int64>
    let received = Atomic<Int>(0)
    let lastArrival = Atomic<Int64>(0)

    init(count: Int) {
        samples = .allocate(capacity: count)
        samples.initialize(repeating: 0)
    }

    deinit { samples.deallocate() }
}

struct BatchingRun {
    var eventsPerSecond: Double
    var p50: Double
    var p99: Double
}

/// `count` 16-byte events export -> import; `interval` (nanoseconds) between sends, 0 for full rate.
func stampedRun(count: Int, batching: NATSOptions.Batching, interval: Int64 = 0) -> BatchingRun {
    let publisher = bridge(.batched, batching: batching)
    let subscriber = bridge(.batched)
    defer {
        publisher.close()
        subscriber.close()
    }
    let subject = uniqueSubject("batching")
    let local = Event<StampedEvent>()
    let remote = Event<StampedEvent>()
    let record = LatencyRecord(count: count)
    let token = remote.subscribe { event in
        let now = nanoseconds()
        record.samples[Int(event.index)] = now - event.sentAt
        record.lastArrival.store(now, ordering: .relaxed)
        record.received.add(1, ordering: .releasing)
    }
    defer { token.cancel() }
    do {
        try publisher.export(local, to: subject)
        try subscriber.import(subject, into: remote)
    } catch {
        print("nats-bench: \(error)")
        exit(1)
    }
    let started = nanoseconds()
    for index in 0..<count {
        if interval > 0 {
            let due = started + Int64(index) * interval
            while nanoseconds() < due {}
        }
        local.send(StampedEvent(sentAt: nanoseconds(), index: Int64(index)))
    }
    let deadline = nanoseconds() + 60_000_000_000
    while record.received.load(ordering: .acquiring) < count && nanoseconds() < deadline { usleep(200) }
    guard record.received.load(ordering: .acquiring) == count else {
        print("nats-bench: the bridge delivered \(record.received.load(ordering: .relaxed)) of \(count) (batching)")
        exit(1)
    }
    let latencies = record.samples.map(Double.init)
    return BatchingRun(
        eventsPerSecond: Double(count) / (Double(record.lastArrival.load(ordering: .relaxed) - started) / 1e9),
        p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99))
}

// MARK: Run

func measure<T>(_ body: () -> T) -> [T] {
    _ = body()  // warm-up
    return (0..<repetitions).map { _ in body() }
}

let throughputCount = quick ? 50_000 : 300_000
let latencyCount = quick ? 500 : 3_000
let sendCount = quick ? 200_000 : 1_000_000

print("nats-bench: \(url), \(repetitions) runs after a warm-up, medians\(quick ? " (quick)" : "")")
print("")

if selected("throughput") {
    // Throughput: the two loops alternate so that both see the same machine load.
    var rawRates: [Double] = []
    var rawFrameRates: [Double] = []
    var bridgeRates: [Double] = []
    _ = rawThroughput(count: throughputCount)
    _ = bridgeThroughput(count: throughputCount)
    for _ in 0..<repetitions {
        rawRates.append(rawThroughput(count: throughputCount))
        bridgeRates.append(bridgeThroughput(count: throughputCount))
        rawFrameRates.append(rawThroughput(count: throughputCount, bytes: frameSize))
    }
    let rawRate = median(rawRates)
    let bridgeRate = median(bridgeRates)
    print("throughput, \(throughputCount) messages end to end (batched)")
    print(String(format: "  raw cnats pub/sub (C, %d B)        %8.3f M msg/s", payloadSize, rawRate / 1e6))
    print(String(format: "  Event<Int> export -> import (%d B) %8.3f M msg/s", frameSize, bridgeRate / 1e6))
    print(
        String(
            format: "  ratio bridge / raw                 %8.2f x   (goal: >= 0.9, ideally 1.0)",
            bridgeRate / rawRate)
    )
    let rawFrameRate = median(rawFrameRates)
    print(
        String(
            format: "  raw cnats pub/sub (C, %d B)        %8.3f M msg/s   (the bridge's frame size)", frameSize,
            rawFrameRate / 1e6))
    print(String(format: "  ratio bridge / raw of equal size   %8.2f x", bridgeRate / rawFrameRate))
    // Each repetition ran the three loops back to back: their own ratios share the machine's
    // load of the moment, which drifts between repetitions on a shared VM.
    print(
        String(
            format: "  paired: median of each run's ratio %8.2f x   (of equal size %.2f x)",
            median(zip(bridgeRates, rawRates).map { $0 / $1 }), median(zip(bridgeRates, rawFrameRates).map { $0 / $1 }))
    )
    print("")
}

if only == "bridge-throughput" {
    let rates = measure { bridgeThroughput(count: throughputCount) }
    print(String(format: "  Event<Int> export -> import (%d B) %8.3f M msg/s", frameSize, median(rates) / 1e6))
}

if only == "raw-throughput" {
    let rates = measure { rawThroughput(count: throughputCount, bytes: frameSize) }
    print(String(format: "  raw cnats pub/sub (C, %d B)        %8.3f M msg/s", frameSize, median(rates) / 1e6))
}

if selected("latency") {
    var rawP50: [Double] = []
    var rawP99: [Double] = []
    var bridgeP50: [Double] = []
    var bridgeP99: [Double] = []
    _ = rawRoundTrips(count: latencyCount)
    _ = bridgeRoundTrips(count: latencyCount)
    for _ in 0..<repetitions {
        let raw = rawRoundTrips(count: latencyCount)
        rawP50.append(percentile(raw, 0.5))
        rawP99.append(percentile(raw, 0.99))
        let bridged = bridgeRoundTrips(count: latencyCount)
        bridgeP50.append(percentile(bridged, 0.5))
        bridgeP99.append(percentile(bridged, 0.99))
    }
    print("latency, \(latencyCount) round trips (immediate / SendAsap)")
    print(
        String(
            format: "  raw cnats request/reply (C)   p50 %7.1f us   p99 %7.1f us", median(rawP50) / 1e3,
            median(rawP99) / 1e3))
    print(
        String(
            format: "  send -> remote handler -> reply p50 %7.1f us   p99 %7.1f us", median(bridgeP50) / 1e3,
            median(bridgeP99) / 1e3))
    print(
        String(format: "  ratio p50 bridge / raw        %7.2f x   (goal: <= 1.2)", median(bridgeP50) / median(rawP50)))
    print(String(format: "  ratio p99 bridge / raw        %7.2f x", median(bridgeP99) / median(rawP99)))
    print("")
}

if selected("local") {
    // The three loops alternate, as the throughput loops do.
    let costs = measure {
        (
            unexported: localSendCost(count: sendCount, exported: false),
            exported: localSendCost(count: sendCount, exported: true),
            publishCall: rawPublishCallCost(count: sendCount)
        )
    }
    let unexported = median(costs.map(\.unexported))
    let exported = median(costs.map(\.exported))
    let publishCall = median(costs.map(\.publishCall))
    print("local send, \(sendCount) sends, one closure observer")
    print(String(format: "  Event<Int>.send, not exported          %7.1f ns", unexported))
    print(String(format: "  Event<Int>.send, exported (batched)    %7.1f ns", exported))
    print(String(format: "  raw natsConnection_Publish, %d B (C)   %7.1f ns", frameSize, publishCall))
    print(
        String(
            format: "  exported - unexported - publish call   %7.1f ns   (the bridge's own cost: stamp + frame)",
            exported - unexported - publishCall))
    print(
        String(
            format: "  paired: median of each run's own cost %6.1f ns",
            median(costs.map { $0.exported - $0.unexported - $0.publishCall })))
    print("")
}

if selected("batching") {
    let batched = NATSOptions.Batching.events(max: 256, linger: .milliseconds(2))
    let fullCount = quick ? 50_000 : 300_000
    let slowCount = quick ? 100 : 250
    let slowInterval: Int64 = 2_000_000
    // The loops alternate, as the throughput loops do, and each repetition's ratio is kept.
    var rawRates: [Double] = []
    var unbatchedRuns: [BatchingRun] = []
    var batchedRuns: [BatchingRun] = []
    var slowUnbatched: [BatchingRun] = []
    var slowBatched: [BatchingRun] = []
    _ = rawThroughput(count: fullCount)
    _ = stampedRun(count: fullCount, batching: .off)
    _ = stampedRun(count: fullCount, batching: batched)
    for _ in 0..<repetitions {
        rawRates.append(rawThroughput(count: fullCount))
        unbatchedRuns.append(stampedRun(count: fullCount, batching: .off))
        batchedRuns.append(stampedRun(count: fullCount, batching: batched))
        slowUnbatched.append(stampedRun(count: slowCount, batching: .off, interval: slowInterval))
        slowBatched.append(stampedRun(count: slowCount, batching: batched, interval: slowInterval))
    }
    let rawRate = median(rawRates)
    func line(_ name: String, _ runs: [BatchingRun], rate: Bool = true) {
        let events = rate ? String(format: "%8.3f M events/s", median(runs.map(\.eventsPerSecond)) / 1e6) : ""
        print(
            String(
                format: "  %@ %@   p50 %8.1f us   p99 %8.1f us",
                name.padding(toLength: 38, withPad: " ", startingAt: 0),
                events.padding(toLength: 20, withPad: " ", startingAt: 0), median(runs.map(\.p50)) / 1e3,
                median(runs.map(\.p99)) / 1e3))
    }
    print("batching, \(fullCount) events of 16 bytes end to end; batching = .events(max: 256, linger: 2 ms)")
    print(String(format: "  raw cnats pub/sub (C, %d B)            %8.3f M msg/s", payloadSize, rawRate / 1e6))
    line("export -> import, batching off", unbatchedRuns)
    line("export -> import, batching on", batchedRuns)
    print(
        String(
            format: "  ratio batched / raw                    %8.2f x   (goal: >= 2)",
            median(batchedRuns.map(\.eventsPerSecond)) / rawRate))
    print(
        String(
            format: "  paired: median of each run's ratio     %8.2f x   (batching off: %.2f x)",
            median(zip(batchedRuns, rawRates).map { $0.eventsPerSecond / $1 }),
            median(zip(unbatchedRuns, rawRates).map { $0.eventsPerSecond / $1 })))
    print("  send -> delivery latency, one event every 2 ms (\(slowCount) events):")
    line("export -> import, batching off", slowUnbatched, rate: false)
    line("export -> import, batching on", slowBatched, rate: false)
    print("")
}
