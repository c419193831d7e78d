import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// A `cancel()` that loses a race (to another `cancel()`, or to `close()`) returns only once
/// the token has stopped, as the winner does: an import's handler no longer runs, an export's
/// later sends are not published, and `isActive` turns false only then.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSTokenRaceTests: XCTestCase {
    /// An import whose handler is running: it returns once `release` is signalled (30 s at
    /// most), and `handlerEnded` is set then. `inHandler` runs in the handler once it has
    /// started, before it waits for `release`.
    struct RunningHandler {
        let bridge: NATSBridge
        let imported: NATSImport
        let handlerEnded: LockedValue<Date?>
        let release: DispatchSemaphore
        let token: Subscription
    }

    func makeRunningHandler(
        inHandler: @escaping @Sendable (NATSImport, NATSBridge?) -> Void = { _, _ in }
    ) throws -> RunningHandler {
        let subject = NATSTestEnvironment.uniqueSubject()
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options { $0.echo = true })
        let remote = Event<Int>()
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let ended = LockedValue<Date?>(nil)
        let handle = LockedValue<NATSImport?>(nil)
        let token = remote.subscribe { [weak bridge] _ in
            started.signal()
            if let imported = handle.value { inHandler(imported, bridge) }
            _ = release.wait(timeout: .now() + 30)
            ended.value = Date()
        }
        let imported = try bridge.import(subject, into: remote)
        handle.value = imported
        let local = Event<Int>()
        try bridge.export(local, to: subject)
        local.send(1)
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success, "the import's handler runs")
        return RunningHandler(bridge: bridge, imported: imported, handlerEnded: ended, release: release, token: token)
    }

    func testTwoCancelsOfAnImportBothReturnOnlyOnceItsHandlerHasReturned() throws {
        let setup = try makeRunningHandler()
        defer {
            setup.release.signal()
            setup.token.cancel()
            setup.bridge.close()
        }
        let results = Received<(stopped: Bool, returned: Date)>()
        let calling = DispatchSemaphore(value: 0)
        let threads = (0..<2).map { _ in
            JoinableThread {
                calling.signal()
                let stopped = setup.imported.cancel()
                results.append((stopped, Date()))
            }
        }
        for _ in threads { XCTAssertEqual(calling.wait(timeout: .now() + 10), .success, "a cancelling thread runs") }
        XCTAssertFalse(results.wait(forCount: 1, timeout: 0.2), "a cancel returned while the handler ran")
        setup.release.signal()
        threads.forEach { $0.join() }
        let handlerEnded = try XCTUnwrap(setup.handlerEnded.value, "the handler returned before both cancels")
        XCTAssertEqual(results.values.filter(\.stopped).count, 1, "one cancel stopped the import")
        for result in results.values {
            XCTAssertGreaterThanOrEqual(
                result.returned, handlerEnded, "a cancel (stopped: \(result.stopped)) returned while the handler ran")
        }
        XCTAssertFalse(setup.imported.isActive)
    }

    func testACancelDuringCloseReturnsOnlyOnceTheImportsHandlerHasReturned() throws {
        let setup = try makeRunningHandler()
        defer {
            setup.release.signal()
            setup.token.cancel()
        }
        let closed = JoinableThread { setup.bridge.close() }
        XCTAssertTrue(waitUntil { setup.bridge.isClosed })
        let results = Received<(stopped: Bool, returned: Date)>()
        let canceller = JoinableThread { results.append((setup.imported.cancel(), Date())) }
        XCTAssertFalse(results.wait(forCount: 1, timeout: 0.1), "the cancel returned while the handler ran")
        setup.release.signal()
        canceller.join()
        let result = try XCTUnwrap(results.values.first)
        let handlerEnded = try XCTUnwrap(setup.handlerEnded.value, "the cancel returned while the handler ran")
        XCTAssertGreaterThanOrEqual(result.returned, handlerEnded)
        XCTAssertFalse(result.stopped, "the close stopped it")
        closed.join()
    }

    func testACancelFromTheImportsOwnHandlerReturnsAtOnceAndAnotherCancelWaitsForTheHandler() throws {
        let ownCancel = LockedValue<(stopped: Bool, seconds: TimeInterval)?>(nil)
        let setup = try makeRunningHandler { imported, _ in
            // The handler cannot wait for itself: its cancel stops the import and returns.
            let start = Date()
            let stopped = imported.cancel()
            ownCancel.value = (stopped, Date().timeIntervalSince(start))
        }
        defer {
            setup.release.signal()
            setup.token.cancel()
            setup.bridge.close()
        }
        XCTAssertTrue(waitUntil { ownCancel.value != nil })
        let own = try XCTUnwrap(ownCancel.value)
        XCTAssertTrue(own.stopped)
        XCTAssertLessThan(own.seconds, 0.5, "the handler's own cancel did not wait for itself")
        XCTAssertNil(setup.handlerEnded.value)
        let results = Received<(stopped: Bool, returned: Date)>()
        let canceller = JoinableThread { results.append((setup.imported.cancel(), Date())) }
        XCTAssertFalse(results.wait(forCount: 1, timeout: 0.2), "a cancel from outside returned while the handler ran")
        setup.release.signal()
        canceller.join()
        let result = try XCTUnwrap(results.values.first)
        XCTAssertFalse(result.stopped, "stopped already, by its handler")
        let handlerEnded = try XCTUnwrap(
            setup.handlerEnded.value, "a cancel from outside returned while the handler ran")
        XCTAssertGreaterThanOrEqual(result.returned, handlerEnded)
        // A cancel from the handler while a close waits for that handler: it returns at once.
        let handlerCancel = LockedValue<Bool?>(nil)
        let handlerCancelled = DispatchSemaphore(value: 0)
        let second = try makeRunningHandler { imported, bridge in
            _ = waitUntil { bridge?.isClosed ?? true }
            handlerCancel.value = imported.cancel()
            handlerCancelled.signal()
        }
        defer {
            second.release.signal()
            second.token.cancel()
        }
        let closes = Received<Int>()
        let closer = JoinableThread { closes.append(second.bridge.close(timeout: .seconds(5))) }
        XCTAssertEqual(handlerCancelled.wait(timeout: .now() + 10), .success, "the handler's cancel returned")
        XCTAssertFalse(closes.wait(forCount: 1, timeout: 0.3), "the close returned while the handler ran")
        second.release.signal()
        closer.join()
        XCTAssertEqual(closes.values, [0])
        XCTAssertNotNil(second.handlerEnded.value, "the close waited for the handler")
        XCTAssertEqual(handlerCancel.value, false, "the close stopped the import; the handler's cancel returned")
    }

    func testTwoCancelsOfAMirrorBothReturnOnlyOnceTheValuesHandlerOnItsWatcherThreadHasReturned() throws {
        let (first, second) = try makeBridgePair()
        let key = "race\(UInt32.random(in: 0 ... .max))"
        let here = ObservableValue(0)
        let mirror = try first.mirror(here, bucket: "observer-tests", key: key)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let ended = LockedValue<Date?>(nil)
        // Runs on the mirror's watcher thread, which sets the value from the bucket; returns once
        // `release` is signalled (30 s at most).
        let token = here.subscribe { value in
            guard value == 7 else { return }
            started.signal()
            _ = release.wait(timeout: .now() + 30)
            ended.value = Date()
        }
        defer {
            release.signal()
            token.cancel()
        }
        let there = ObservableValue(0)
        try second.mirror(there, bucket: "observer-tests", key: key)
        there.value = 7
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success, "the bucket's value is set")
        let results = Received<(stopped: Bool, returned: Date)>()
        let calling = DispatchSemaphore(value: 0)
        let threads = (0..<2).map { _ in
            JoinableThread {
                calling.signal()
                let stopped = mirror.cancel()
                results.append((stopped, Date()))
            }
        }
        for _ in threads { XCTAssertEqual(calling.wait(timeout: .now() + 10), .success, "a cancelling thread runs") }
        XCTAssertFalse(results.wait(forCount: 1, timeout: 0.2), "a cancel returned while the handler ran")
        release.signal()
        threads.forEach { $0.join() }
        let handlerEnded = try XCTUnwrap(ended.value, "the handler returned before both cancels")
        XCTAssertEqual(results.values.filter(\.stopped).count, 1, "one cancel stopped the mirror")
        for result in results.values {
            XCTAssertGreaterThanOrEqual(
                result.returned, handlerEnded, "a cancel (stopped: \(result.stopped)) returned while the handler ran")
        }
        XCTAssertFalse(mirror.isActive)
    }

    /// 20 000 keys: the winning cancel takes long enough to stop them all that a losing one,
    /// or a thread that sees `isActive` turn false, sends while it is still at work.
    func testSendsAfterALosingCancelReturnedOrAfterIsActiveTurnedFalseAreNotPublished() throws {
        let (publisher, subscriber) = try makeBridgePair()
        let prefix = NATSTestEnvironment.uniqueSubject()
        let keys = (0..<20_000).map { "k\($0)" }
        let last = try XCTUnwrap(keys.last)
        let received = Received<Int>()
        let remote = Event<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        try subscriber.import("\(prefix).\(last)", into: remote)
        // Published on the same connection after the round's sends: once it arrives, so has
        // every value those sends published.
        let marker = Event<Int>()
        try publisher.export(marker, to: "\(prefix).\(last)")
        for round in 1...3 {
            let local = KeyedEvent<String, Int>()
            let export = try publisher.export(local, keys: keys, toPrefix: prefix)
            local.send(0, forKey: last)
            let sentBefore = -round * 1000
            marker.send(sentBefore)
            XCTAssertTrue(waitUntil { received.values.contains(sentBefore) }, "round \(round): the export publishes")
            let go = DispatchSemaphore(value: 0)
            let results = Received<Bool>()
            let cancellers = (1...2).map { index in
                JoinableThread {
                    go.wait()
                    results.append(export.cancel())
                    // Sent after this cancel returned: never published.
                    local.send(round * 100 + index, forKey: last)
                }
            }
            let watcher = JoinableThread {
                go.wait()
                while export.isActive { sched_yield() }
                local.send(round * 100 + 9, forKey: last)
            }
            for _ in 0..<3 { go.signal() }
            cancellers.forEach { $0.join() }
            watcher.join()
            XCTAssertEqual(results.values.filter { $0 }.count, 1, "round \(round): one cancel stopped the export")
            let sentAfter = round * 1000
            marker.send(sentAfter)
            XCTAssertTrue(waitUntil { received.values.contains(sentAfter) }, "round \(round): the marker arrives")
            let late = received.values.filter { (100...999).contains($0) }
            XCTAssertEqual(late, [], "round \(round): published after a cancel returned or isActive turned false")
        }
    }
}
