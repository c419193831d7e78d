import Dispatch
import Foundation
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// A view model as an app writes it: its handlers carry no annotation and
/// mutate main-actor state. Each records the values it received and how
/// many arrived off the main actor.
@MainActor
final class TitleModel {
    var titles: [Int] = []
    var targetTitles: [Int] = []
    var offMainActor = 0
    let tokens = SubscriptionBag()

    func bind(to source: some ObserverSource<Int>) {
        source.subscribe { value in self.record(value) }.store(in: tokens)
    }

    func bindTarget(to source: some ObserverSource<Int>) {
        source.subscribe(self) { model, value in
            if !MainActorDeliveries.isOnMainActor { model.offMainActor += 1 }
            model.targetTitles.append(value)
        }
    }

    func bind(to prices: KeyedEvent<String, Int>, key: String) {
        prices.subscribe(key: key) { value in self.record(value) }.store(in: tokens)
        prices.subscribe(self, key: key) { model, value in
            if !MainActorDeliveries.isOnMainActor { model.offMainActor += 1 }
            model.targetTitles.append(value)
        }
    }

    func bind(to selection: KeySelection<String, Int>) {
        selection.subscribe { item in self.record(item.value) }.store(in: tokens)
        selection.subscribe(self) { model, item in
            if !MainActorDeliveries.isOnMainActor { model.offMainActor += 1 }
            model.targetTitles.append(item.value)
        }
    }

    /// The ways back to the sending thread from main-actor code.
    func bindOnTheSendingThread(to event: Event<Int>, _ received: Received<String>) -> [Subscription] {
        let stored: @Sendable (Int) -> Void = { value in
            received.append("stored \(value) \(MainActorDeliveries.isOnMainActor)")
        }
        return [
            event.subscribe(delivery: .synchronous) { value in
                received.append("delivery \(value) \(MainActorDeliveries.isOnMainActor)")
            },
            event.subscribe(stored),
            event.subscribe(Self.sendingThreadHandler(received)),
        ]
    }

    nonisolated static func sendingThreadHandler(_ received: Received<String>) -> @Sendable (Int) -> Void {
        { value in received.append("function \(value) \(MainActorDeliveries.isOnMainActor)") }
    }

    private func record(_ value: Int) {
        if !MainActorDeliveries.isOnMainActor { offMainActor += 1 }
        titles.append(value)
    }
}

/// An actor whose handlers use `self`: they run isolated to it.
actor Tally {
    private(set) var values: [Int] = []
    private(set) var targetValues: [Int] = []

    func bind(to source: some ObserverSource<Int>) -> Subscription {
        source.subscribe { value in self.values.append(value) }
    }

    func bindTarget(_ target: Tally, to source: some ObserverSource<Int>) -> Subscription {
        source.subscribe(target) { _, value in self.targetValues.append(value) }
    }

    /// A closure that does not use `self` is not isolated to the actor: it
    /// runs on the sending thread, before `send` returns.
    func bindWithoutSelf(to event: Event<Int>, _ received: Received<Int>) -> Subscription {
        event.subscribe { value in received.append(value) }
    }
}

@globalActor
actor RenderActor {
    static let shared = RenderActor()
}

/// State of the global actor: only code isolated to it may touch it.
@RenderActor
final class RenderLog {
    static let shared = RenderLog()
    var values: [Int] = []

    func bind(to event: Event<Int>) -> Subscription {
        event.subscribe { value in self.values.append(value) }
    }
}

/// The calling thread's identity, comparable across threads.
private func currentThreadID() -> UInt {
    #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
    #else
        UInt(pthread_self())
    #endif
}

final class HandlerIsolationTests: XCTestCase {
    /// Tracked subscriptions (on once the testing product ran in this
    /// process) hold an actor-isolated handler's actor weakly, and
    /// `RenderActor.shared` lives as long as the process: a weak reference in
    /// a global keeps its side table visible to LeakSanitizer (see
    /// LeakSanitizerSupport).
    override class func setUp() {
        super.setUp()
        pinnedRenderActor = RenderActor.shared
    }

    /// Lets the main queue run what was enqueued on it before this call.
    private func drainMainQueue() {
        let drained = expectation(description: "main queue drained")
        DispatchQueue.main.async { drained.fulfill() }
        waitUntilFulfilled([drained], timeout: 30)
    }

    /// Runs `body` on `threads` new threads at once (off the main actor) and
    /// waits for all of them.
    private func onBackgroundThreads(_ threads: Int = 1, _ body: @escaping @Sendable (Int) -> Void) {
        let done = (0..<threads).map { expectation(description: "background thread \($0)") }
        for (index, finished) in done.enumerated() {
            Thread {
                XCTAssertFalse(MainActorDeliveries.isOnMainActor)
                body(index)
                finished.fulfill()
            }.start()
        }
        waitUntilFulfilled(done, timeout: 60)
    }

    /// Binds a fresh model to `source` (closure and weak target), sends
    /// 1...1000 from each of two background threads and 0 from the main
    /// actor, and checks every value arrived once, on the main actor, each
    /// sender's values in order, the main-actor send after those enqueued
    /// before it.
    private func checkMainActorDelivery(
        _ name: String, bind: @MainActor (TitleModel) -> Void, send: @escaping @Sendable (Int) -> Void,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let model = MainActor.assumeIsolated { TitleModel() }
        MainActor.assumeIsolated { bind(model) }
        // On the main actor with nothing queued: called at once, inside send.
        MainActor.assumeIsolated {
            send(-1)
            XCTAssertEqual(model.titles, [-1], "\(name): inline on the main actor", file: file, line: line)
            XCTAssertEqual(model.targetTitles, [-1], "\(name): target inline", file: file, line: line)
        }
        onBackgroundThreads(2) { sender in
            for value in 1...1_000 { send(sender * 10_000 + value) }
        }
        // Behind the two senders' queued deliveries, not before them.
        MainActor.assumeIsolated { send(0) }
        drainMainQueue()
        MainActor.assumeIsolated {
            for received in [model.titles, model.targetTitles] {
                XCTAssertEqual(received.count, 2_002, "\(name): every send once", file: file, line: line)
                XCTAssertEqual(received.first, -1, file: file, line: line)
                XCTAssertEqual(received.last, 0, "\(name): in order with main-actor sends", file: file, line: line)
                for sender in 0..<2 {
                    let mine = received.filter { $0 / 10_000 == sender && $0 > 0 }
                    XCTAssertEqual(
                        mine, (1...1_000).map { sender * 10_000 + $0 }, "\(name): sender \(sender) in order",
                        file: file, line: line)
                }
            }
            XCTAssertEqual(model.offMainActor, 0, "\(name): always on the main actor", file: file, line: line)
        }
    }

    func testMainActorMethodHandlersRunOnTheMainActorOnEveryKind() {
        let event = Event<Int>()
        checkMainActorDelivery(
            "Event",
            bind: { model in
                model.bind(to: event)
                model.bindTarget(to: event)
            }, send: { event.send($0) })

        let value = ObservableValue(Int.min)
        checkMainActorDelivery(
            "ObservableValue",
            bind: { model in
                model.bind(to: value)
                model.bindTarget(to: value)
            }, send: { value.value = $0 })

        let prices = KeyedEvent<String, Int>()
        checkMainActorDelivery(
            "KeyedEvent key", bind: { model in model.bind(to: prices, key: "a") },
            send: { prices.send($0, forKey: "a") })

        let moves = KeyedEvent<String, Int>()
        checkMainActorDelivery(
            "KeySelection", bind: { model in model.bind(to: moves.forKeys(["n", "s"])) },
            send: { moves.send($0, forKey: $0 % 2 == 0 ? "n" : "s") })
    }

    func testAReplayingMainActorHandlerGetsTheCurrentValueFirst() {
        let value = ObservableValue(7)
        let model = MainActor.assumeIsolated { TitleModel() }
        MainActor.assumeIsolated { model.bind(to: value.replaying) }
        onBackgroundThreads { _ in value.value = 8 }
        drainMainQueue()
        MainActor.assumeIsolated {
            XCTAssertEqual(model.titles, [7, 8])
            XCTAssertEqual(model.offMainActor, 0)
        }
    }

    func testANonisolatedHandlerRunsOnTheSendingThreadBeforeSendReturns() {
        let event = Event<Int>()
        let value = ObservableValue(0)
        let prices = KeyedEvent<String, Int>()
        let received = Received<String>()
        let sender = Received<UInt>()
        @Sendable func record(_ name: String) -> @Sendable (Int) -> Void {
            { value in received.append("\(name) \(value) \(currentThreadID() == sender.values.first)") }
        }
        let tokens = [
            event.subscribe(record("event")), value.subscribe(record("value")),
            prices.subscribe(key: "a", record("key")),
            prices.forKeys(["a"]).subscribe { item in record("selection")(item.value) },
        ]
        onBackgroundThreads { _ in
            sender.append(currentThreadID())
            event.send(1)
            XCTAssertEqual(received.values, ["event 1 true"], "before send returned, on the sending thread")
            value.value = 2
            prices.send(3, forKey: "a")
            XCTAssertEqual(
                received.values, ["event 1 true", "value 2 true", "key 3 true", "selection 3 true"])
        }
        tokens.forEach { $0.cancel() }
    }

    func testMainActorCodeOptsBackOntoTheSendingThread() {
        let event = Event<Int>()
        let received = Received<String>()
        let tokens = MainActor.assumeIsolated {
            TitleModel().bindOnTheSendingThread(to: event, received)
        }
        onBackgroundThreads { _ in
            event.send(1)
            XCTAssertEqual(
                received.values.sorted(), ["delivery 1 false", "function 1 false", "stored 1 false"],
                "all three ran before send returned, off the main actor")
        }
        tokens.forEach { $0.cancel() }
    }

    func testAnActorMethodClosureUsingSelfRunsOnTheActorInOrder() async throws {
        let event = Event<Int>()
        let value = ObservableValue(0)
        let tally = Tally()
        let target = Tally()
        let tokens = [
            await tally.bind(to: event), await tally.bindTarget(target, to: event),
            await tally.bind(to: value.replaying),
        ]
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<2 {
                group.addTask { for index in 1...5_000 { event.send(100_000 + sender * 10_000 + index) } }
            }
        }
        for index in 1...100 { value.value = index }
        // Every delivery queued for the actor has run.
        try await settleDeliveries(timeout: .seconds(10))
        let values = await tally.values
        let targetValues = await tally.targetValues
        XCTAssertEqual(values.count, 10_101, "every send once, and the replayed value")
        XCTAssertEqual(targetValues.count, 10_000)
        for sender in 0..<2 {
            let expected = (1...5_000).map { 100_000 + sender * 10_000 + $0 }
            let isSenders: (Int) -> Bool = { $0 >= 100_000 && ($0 - 100_000) / 10_000 == sender }
            XCTAssertEqual(values.filter(isSenders), expected, "sender \(sender) in order")
            XCTAssertEqual(targetValues.filter(isSenders), expected, "sender \(sender) in order, target form")
        }
        XCTAssertEqual(values.filter { $0 <= 100 }, Array(0...100), "the replay, then the sets in order")
        tokens.forEach { $0.cancel() }
        XCTAssertEqual(event.subscribersCount, 0)
    }

    func testAnActorMethodClosureNotUsingSelfRunsOnTheSendingThread() async {
        let event = Event<Int>()
        let received = Received<Int>()
        let token = await Tally().bindWithoutSelf(to: event, received)
        event.send(1)
        XCTAssertEqual(received.values, [1], "before send returned")
        token.cancel()
    }

    func testAGlobalActorClosureRunsOnItsActorInOrder() async throws {
        let event = Event<Int>()
        let token = await RenderLog.shared.bind(to: event)
        DispatchQueue.concurrentPerform(iterations: 2) { sender in
            for index in 1...2_000 { event.send(sender * 10_000 + index) }
        }
        // Every delivery queued for the global actor has run.
        try await settleDeliveries(timeout: .seconds(10))
        let values = await RenderLog.shared.values
        XCTAssertEqual(values.count, 4_000)
        for sender in 0..<2 {
            XCTAssertEqual(values.filter { $0 / 10_000 == sender }, (1...2_000).map { sender * 10_000 + $0 })
        }
        token.cancel()
    }

    func testTheLimitCountsMainActorDeliveries() async {
        let event = Event<Int>()
        let received = Received<Int>()
        let token = await MainActor.run {
            event.subscribe(limit: 2) { @MainActor value in received.append(value) }
        }
        await Task.detached { for value in 1...5 { event.send(value) } }.value
        await MainActor.run {}
        XCTAssertFalse(token.isActive)
        XCTAssertEqual(received.values, [1, 2])
    }
}

/// The reinterpretation behind the sending-thread path: an `@isolated(any)`
/// handler with no isolation, called through its plain form.
final class UnsafeSynchronousFormTests: XCTestCase {
    private struct Reading: Sendable, Equatable {
        var label: String
        var values: [Int]
    }

    private final class Meter: Sendable {
        let received = Received<String>()
        let name: String
        init(_ name: String) { self.name = name }
        func read(_ value: Int) { received.append("\(name) \(value)") }
        static let log = Received<String>()
        static func note(_ text: String) { log.append(text) }
    }

    private func plain<Value>(
        _ handler: @escaping @isolated(any) @Sendable (Value) -> Void
    ) -> @Sendable (Value) -> Void {
        XCTAssertNil(handler.isolation)
        return unsafeSynchronousForm(of: IsolatedHandler(handler), as: SynchronousHandler<Value>.self).call
    }

    private func plain<First: AnyObject, Second>(
        _ handler: @escaping @isolated(any) @Sendable (First, Second) -> Void
    ) -> @Sendable (First, Second) -> Void {
        XCTAssertNil(handler.isolation)
        return unsafeSynchronousForm(
            of: IsolatedTargetHandler(handler), as: SynchronousTargetHandler<First, Second>.self
        ).call
    }

    func testCapturesReachTheHandler() {
        let received = Received<String>()
        let prefix = "captured"
        let reading = Reading(label: "r", values: [1, 2, 3])
        let meter = Meter("m")
        plain { (value: Int) in received.append("\(prefix) \(value) \(reading.values) \(meter.name)") }(4)
        XCTAssertEqual(received.values, ["captured 4 [1, 2, 3] m"])
    }

    func testAGenericValue() {
        func roundTrip<Value: Sendable & Equatable>(_ value: Value) -> [Value] {
            let received = Received<Value>()
            plain { (value: Value) in received.append(value) }(value)
            return received.values
        }
        XCTAssertEqual(roundTrip(42), [42])
        XCTAssertEqual(roundTrip("text"), ["text"])
        let reading = Reading(label: "large", values: Array(0..<100))
        XCTAssertEqual(roundTrip(reading), [reading])
        XCTAssertEqual(roundTrip(Optional<Int>.none), [nil])
    }

    func testMethodReferences() {
        let meter = Meter("bound")
        plain(meter.read)(5)
        XCTAssertEqual(meter.received.values, ["bound 5"])
        plain(Meter.note)("static")
        XCTAssertEqual(Meter.log.values, ["static"])
    }

    func testAClosureStoredInAVariableFirst() {
        let received = Received<Int>()
        let stored: @Sendable (Int) -> Void = { received.append($0 * 2) }
        plain(stored)(21)
        var reassigned: @Sendable (Int) -> Void = { _ in }
        reassigned = { received.append($0 + 1) }
        plain(reassigned)(1)
        XCTAssertEqual(received.values, [42, 2])
    }

    func testTwoArguments() {
        let meter = Meter("target")
        let prefix = "two"
        plain { (target: Meter, reading: Reading) in target.received.append("\(prefix) \(reading.label)") }(
            meter, Reading(label: "x", values: []))
        XCTAssertEqual(meter.received.values, ["two x"])
    }

    func testThroughEverySubscribeFormOfAKind() {
        let event = Event<Reading>()
        let meter = Meter("event")
        let stored: @Sendable (Reading) -> Void = { meter.received.append("stored \($0.label)") }
        let tokens = [
            event.subscribe(stored),
            event.subscribe { meter.received.append("closure \($0.label)") },
            event.subscribe(meter) { meter, reading in meter.received.append("target \(reading.label)") },
        ]
        event.send(Reading(label: "a", values: [1]))
        XCTAssertEqual(meter.received.values.sorted(), ["closure a", "stored a", "target a"])
        tokens.forEach { $0.cancel() }
    }
}

/// Written only from `HandlerIsolationTests.setUp()` (XCTest's one test
/// thread), never read.
nonisolated(unsafe) private weak var pinnedRenderActor: RenderActor?
