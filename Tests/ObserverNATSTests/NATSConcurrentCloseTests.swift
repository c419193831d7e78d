import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// `close()` from several threads at once, and from inside the bridge's own handlers: every
/// caller outside a handler returns once the bridge is closed, all with the same count;
/// a caller inside a handler returns without waiting for the handler it runs in.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSConcurrentCloseTests: XCTestCase {
    /// A bridge with an at-least-once export that has published one event (flushed) and an
    /// import of the same subject whose handler is running: it waits until `release` is
    /// signalled (30 s at most), then runs `inHandler`, and `handlerEnded` is set when it returns.
    struct RunningHandlerSetup {
        let bridge: NATSBridge
        let local: Event<Int>
        let remote: Event<Int>
        let handlerStarted = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let handlerEnded = LockedValue<Date?>(nil)
        var token: Subscription?
    }

    func makeRunningHandlerSetup(
        inHandler: @escaping @Sendable (NATSBridge) -> Void = { _ in }
    ) throws -> RunningHandlerSetup {
        let url = try NATSTestEnvironment.url()
        let subject = NATSTestEnvironment.uniqueSubject()
        let streamName = "CLOSE\(UInt32.random(in: 0 ... .max))"
        // Echo on: the bridge's own import receives what its export publishes.
        let bridge = try NATSBridge(options: NATSOptions(servers: [url], echo: true))
        var setup = RunningHandlerSetup(bridge: bridge, local: Event<Int>(), remote: Event<Int>())
        let started = setup.handlerStarted
        let release = setup.release
        let ended = setup.handlerEnded
        setup.token = setup.remote.subscribe { [weak bridge] _ in
            started.signal()
            _ = release.wait(timeout: .now() + 30)
            if let bridge { inHandler(bridge) }
            ended.value = Date()
        }
        let stream = NATSStream(name: streamName, subjects: [subject])
        try bridge.import(subject, into: setup.remote)
        try bridge.export(setup.local, to: subject, delivery: .atLeastOnce(stream: stream))
        setup.local.send(1)
        XCTAssertEqual(bridge.flush(timeout: .seconds(10)), 0)
        XCTAssertEqual(setup.handlerStarted.wait(timeout: .now() + 10), .success, "the import's handler runs")
        return setup
    }

    func testTwoConcurrentClosesWithARunningImportHandlerBothReturnOnceClosedWithTheSameCount() throws {
        let setup = try makeRunningHandlerSetup()
        defer {
            setup.release.signal()
            setup.token?.cancel()
        }
        let bridge = setup.bridge
        let results = Received<(count: Int, returned: Date)>()
        let calling = DispatchSemaphore(value: 0)
        let threads = (0..<2).map { _ in
            JoinableThread {
                calling.signal()
                let count = bridge.close()
                results.append((count, Date()))
            }
        }
        for _ in threads { XCTAssertEqual(calling.wait(timeout: .now() + 10), .success, "a closing thread runs") }
        XCTAssertFalse(results.wait(forCount: 1, timeout: 0.2), "a close returned while the import's handler ran")
        setup.release.signal()
        XCTAssertTrue(results.wait(forCount: 2, timeout: 60), "both closes return")
        threads.forEach { $0.join() }
        let handlerEnded = try XCTUnwrap(setup.handlerEnded.value, "the handler ended before a close returned")
        for result in results.values {
            XCTAssertGreaterThanOrEqual(
                result.returned, handlerEnded, "a close returned while the import's handler still ran")
        }
        XCTAssertEqual(Set(results.values.map(\.count)), [0], "both report the same count (nothing given up)")
        XCTAssertTrue(bridge.isClosed)
        XCTAssertEqual(bridge.close(), 0, "a later close reports the same count")
    }

    func testEightConcurrentClosesAllReturnTheSameCountAfterTheBridgeClosed() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let log = StatusLog()
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        let bridge = try NATSBridge(options: options, status: log.event)
        let local = Event<Int>()
        let export = try bridge.export(
            local, to: "many.values", delivery: .atLeastOnce(stream: NATSStream(name: "MANY", subjects: ["many.>"])))
        XCTAssertEqual(bridge.flush(timeout: .seconds(10)), 0)
        server.kill9()
        XCTAssertTrue(waitUntil { log.values.contains(.disconnected) })
        // Pending for good: the server is gone, so every close gives up the same 40.
        for value in 1...40 { local.send(value) }
        let start = DispatchSemaphore(value: 0)
        let results = Received<Int>()
        let threads = (0..<8).map { _ in
            Thread {
                start.wait()
                results.append(bridge.close(timeout: .milliseconds(300)))
                XCTAssertTrue(bridge.isClosed)
                XCTAssertEqual(bridge.pendingPublishes, 0, "a close returned before the bridge gave everything up")
            }
        }
        threads.forEach { $0.start() }
        for _ in threads { start.signal() }
        XCTAssertTrue(waitUntil(timeout: 60) { results.count == 8 }, "every close returns")
        XCTAssertEqual(results.values, Array(repeating: 40, count: 8), "every caller gets the same count")
        XCTAssertEqual(export.failedPublishes, 40, "given up once, not once per caller")
        XCTAssertEqual(bridge.close(), 40)
    }

    func testCloseFromAnImportHandlerWhileAnotherCloseWaitsForThatHandlerReturnsWithoutWaiting() throws {
        let observed = LockedValue<Int?>(nil)
        let setup = try makeRunningHandlerSetup { bridge in
            // The test thread's close is under way and waits for this handler to return.
            XCTAssertTrue(waitUntil(timeout: 10) { bridge.isClosed })
            usleep(200_000)
            observed.value = bridge.close()
        }
        defer { setup.token?.cancel() }
        setup.release.signal()
        let count = setup.bridge.close()
        XCTAssertEqual(count, 0)
        XCTAssertEqual(observed.value, 0, "the handler's close returned (without waiting for its own handler)")
        XCTAssertNotNil(setup.handlerEnded.value)
        XCTAssertEqual(setup.bridge.close(), 0)
    }

    func testCloseFromAStatusObserverOnTheClientsCallbackThreadClosesTheBridge() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let status = Event<NATSStatus>()
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        let bridge = try NATSBridge(options: options, status: status)
        let closedByObserver = LockedValue<Int?>(nil)
        let token = status.subscribe { [weak bridge] status in
            guard status == .disconnected, let bridge else { return }
            closedByObserver.value = bridge.close(timeout: .milliseconds(200))
        }
        defer { token.cancel() }
        let remote = Event<Int>()
        try bridge.import("callback.values", into: remote)
        server.kill9()
        XCTAssertTrue(waitUntil(timeout: 30) { closedByObserver.value != nil }, "the observer's close returned")
        XCTAssertTrue(bridge.isClosed)
        XCTAssertEqual(bridge.close(), closedByObserver.value, "a later close reports the same count")
    }

    func testCloseFromAStatusObserverDuringAnotherCloseReturnsAndTheOtherCloseFinishes() throws {
        let observed = LockedValue<Int?>(nil)
        let url = try NATSTestEnvironment.url()
        let status = Event<NATSStatus>()
        let bridge = try NATSBridge(options: NATSOptions(servers: [url]), status: status)
        // `.closed` is sent on cnats' callback thread while the test thread's close waits for it.
        let token = status.subscribe { [weak bridge] status in
            guard status == .closed, let bridge else { return }
            observed.value = bridge.close()
        }
        defer { token.cancel() }
        try bridge.import(NATSTestEnvironment.uniqueSubject(), into: Event<Int>())
        XCTAssertEqual(bridge.close(), 0)
        XCTAssertEqual(observed.value, 0, "the observer's close returned")
    }

    func testCloseFromAnObserverOfTheStatusesTheCloseItselfSendsReturnsAtOnce() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let status = Event<NATSStatus>()
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        let bridge = try NATSBridge(options: options, status: status)
        let disconnected = LockedValue(false)
        let observed = Received<Int>()
        let token = status.subscribe { [weak bridge] status in
            if status == .disconnected { disconnected.value = true }
            // Sent by the close below, on its own thread, for what it gives up.
            guard case .unconfirmed = status, let bridge else { return }
            observed.append(bridge.close())
        }
        defer { token.cancel() }
        let local = Event<Int>()
        try bridge.export(
            local, to: "reentrant.values",
            delivery: .atLeastOnce(stream: NATSStream(name: "REENTRANT", subjects: ["reentrant.>"])))
        XCTAssertEqual(bridge.flush(timeout: .seconds(10)), 0)
        server.kill9()
        XCTAssertTrue(waitUntil { disconnected.value })
        for value in 1...10 { local.send(value) }
        XCTAssertEqual(bridge.close(timeout: .milliseconds(200)), 10)
        XCTAssertEqual(observed.values, [0], "the observer's close returned at once, on the closing thread")
        XCTAssertEqual(bridge.close(), 10)
    }

    func testAFirstCloseFromAnImportHandlerClosesWithoutWaitingForThatHandlerAndLaterClosesAgree() throws {
        let observed = LockedValue<Int?>(nil)
        // The handler closes after the setup's flush has seen the event stored.
        let setup = try makeRunningHandlerSetup { bridge in
            observed.value = bridge.close()
        }
        defer { setup.token?.cancel() }
        setup.release.signal()
        XCTAssertTrue(waitUntil(timeout: 30) { observed.value != nil }, "the handler's close returned")
        XCTAssertEqual(observed.value, 0)
        XCTAssertTrue(setup.bridge.isClosed)
        XCTAssertEqual(setup.bridge.close(), 0, "a later close waits for nothing and reports the same count")
        XCTAssertThrowsError(try setup.bridge.export(Event<Int>(), to: "closed.values"))
    }

    func testCloseFromTheRetryThreadsRefusedObserverReturnsAtOnceAndSettlesEverythingBeforeClosed() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let admin = try JetStreamAdmin(url: server.url)
        // One message fits; the server refuses each of the others for good.
        let limited = admin.request(
            "STREAM.CREATE.FULL",
            [
                "name": "FULL", "subjects": ["full.>"], "max_msgs": 1, "discard": "new", "storage": "file",
                "retention": "limits", "num_replicas": 1, "duplicate_window": 120_000_000_000,
            ])
        XCTAssertNil(limited?["error"], "\(limited ?? [:])")
        let log = StatusLog()
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        let bridge = try NATSBridge(options: options, status: log.event)
        let sendsReturned = DispatchSemaphore(value: 0)
        let closed = LockedValue<(count: Int, seconds: TimeInterval, pending: Int)?>(nil)
        let closeClaim = FirstClaim()
        let token = log.event.subscribe { [weak bridge] status in
            // On the retry thread: its default timeout is 30 s, and nothing it could wait for
            // would be republished while it waits.
            guard case .refused = status, closeClaim.claim(), let bridge else { return }
            _ = sendsReturned.wait(timeout: .now() + 30)
            let start = Date()
            let count = bridge.close()
            closed.value = (count, Date().timeIntervalSince(start), bridge.pendingPublishes)
        }
        defer { token.cancel() }
        let local = Event<Int>()
        let export = try bridge.export(
            local, to: "full.values", delivery: .atLeastOnce(stream: NATSStream(name: "FULL", subjects: ["full.>"])))
        for value in 1...50 { local.send(value) }
        sendsReturned.signal()
        XCTAssertTrue(waitUntil(timeout: 40) { closed.value != nil }, "the observer's close returned")
        let result = try XCTUnwrap(closed.value)
        XCTAssertLessThan(result.seconds, 3, "the close from the retry thread waited for that thread")
        XCTAssertEqual(result.pending, 0, "everything settled when the close returned")
        XCTAssertEqual(result.count, bridge.unconfirmedPublishes)
        XCTAssertEqual(export.failedPublishes, 49, "one stored, every other one given up once")
        XCTAssertEqual(bridge.refusedPublishes + bridge.unconfirmedPublishes, 49)
        XCTAssertEqual(refusedCount(log) + unconfirmedCount(log), 49, "each given-up event reported once")
        // Nothing is reported after .closed, within 300 ms.
        XCTAssertFalse(
            log.statuses.wait(timeout: 0.3) { statuses in
                statuses.firstIndex(of: .closed).map { $0 + 1 < statuses.count } ?? false
            }, "reported after .closed: \(log.values)")
        let statuses = log.values
        let closedAt = try XCTUnwrap(statuses.firstIndex(of: .closed), "\(statuses)")
        XCTAssertEqual(Array(statuses[(closedAt + 1)...]), [], "reported after .closed")
        XCTAssertEqual(bridge.close(), result.count)
    }
}
