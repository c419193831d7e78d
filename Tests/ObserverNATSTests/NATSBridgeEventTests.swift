import Foundation
import ObserverNATS
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

/// Events across two connections: the same observers as local events, in order, exactly once.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSBridgeEventTests: XCTestCase {
    final class Screen: Sendable {
        let shown = Received<Int>()
    }

    func testExportedEventReachesEveryKindOfImportedObserverInOrder() async throws {
        let (publisher, subscriber) = try makeBridgePair()
        let subject = NATSTestEnvironment.uniqueSubject()
        let local = Event<Int>()
        let remote = Event<Int>()
        try publisher.export(local, to: subject)
        let imported = try subscriber.import(subject, into: remote)

        let closureValues = Received<Int>()
        let screen = Screen()
        let mainActorValues = Received<Int>()
        let token = remote.subscribe { value in closureValues.append(value) }
        let targetToken = remote.subscribe(screen) { screen, value in screen.shown.append(value) }
        let mainToken = remote.subscribe { @MainActor value in mainActorValues.append(value) }
        let count = 2_000
        let stream = remote.values
        let consumer = Task {
            var received: [Int] = []
            for await value in stream {
                received.append(value)
                if received.count == count { break }
            }
            return received
        }
        // `remote.values` subscribed when it was read, and `import` returned once the server
        // had the subscription: the sends need not wait for the consumer to start.
        for value in 1...count { local.send(value) }
        let expected = Array(1...count)
        let streamed = await consumer.value
        XCTAssertTrue(waitUntil { closureValues.count == count && screen.shown.count == count })
        try await settleDeliveries()
        XCTAssertEqual(closureValues.values, expected)
        XCTAssertEqual(screen.shown.values, expected)
        XCTAssertEqual(mainActorValues.values, expected)
        XCTAssertEqual(streamed, expected)
        // The count goes up once the send into the local event has returned.
        XCTAssertTrue(waitUntil { imported.deliveredCount == count })
        XCTAssertEqual(imported.malformedCount, 0)
        XCTAssertEqual(imported.missedCount, 0)
        token.cancel()
        targetToken.cancel()
        mainToken.cancel()
    }

    func testEveryWireTypeAndJSONRoundTrips() throws {
        struct Reading: Codable, Equatable, Sendable {
            var sensor: String
            var celsius: Double
        }
        let (publisher, subscriber) = try makeBridgePair()
        func roundTrip<Value: Sendable & Equatable>(
            _ values: [Value], codec: NATSCodec<Value>, line: UInt = #line
        ) throws {
            let subject = NATSTestEnvironment.uniqueSubject("roundTrip\(line)")
            let local = Event<Value>()
            let remote = Event<Value>()
            let received = Received<Value>()
            let token = remote.subscribe { received.append($0) }
            defer { token.cancel() }
            try publisher.export(local, to: subject, codec: codec)
            try subscriber.import(subject, into: remote, codec: codec)
            for value in values { local.send(value) }
            XCTAssertTrue(waitUntil { received.count == values.count }, line: line)
            XCTAssertEqual(received.values, values, line: line)
        }
        try roundTrip([Int.min, -1, 0, 1, Int.max], codec: .binary)
        try roundTrip([Int8.min, 0, Int8.max], codec: .binary)
        try roundTrip([Int16.min, 0, Int16.max], codec: .binary)
        try roundTrip([Int32.min, 0, Int32.max], codec: .binary)
        try roundTrip([Int64.min, 0, Int64.max], codec: .binary)
        try roundTrip([UInt.min, UInt.max], codec: .binary)
        try roundTrip([UInt8.min, UInt8.max], codec: .binary)
        try roundTrip([UInt16.min, UInt16.max], codec: .binary)
        try roundTrip([UInt32.min, UInt32.max], codec: .binary)
        try roundTrip([UInt64.min, UInt64.max], codec: .binary)
        try roundTrip([0.0, -1.5, .infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude], codec: .binary)
        try roundTrip([Float(0), -2.25, .infinity], codec: .binary)
        try roundTrip([true, false, true], codec: .binary)
        try roundTrip(["", "héllo", "a.b * > c", String(repeating: "x", count: 10_000)], codec: .binary)
        try roundTrip([Data(), Data([0, 1, 2, 255]), Data(count: 70_000)], codec: .binary)
        try roundTrip([Reading(sensor: "a", celsius: 21.5), Reading(sensor: "b.c", celsius: -3)], codec: .json)
    }

    func testEchoIsOffByDefaultAndOnWhenAsked() throws {
        let subject = NATSTestEnvironment.uniqueSubject()
        for echo in [false, true] {
            let bridge = try NATSBridge(options: try NATSTestEnvironment.options { $0.echo = echo })
            let local = Event<Int>()
            let remote = Event<Int>()
            let received = Received<Int>()
            let token = remote.subscribe { received.append($0) }
            try bridge.export(local, to: subject)
            let imported = try bridge.import(subject, into: remote)
            for value in 1...100 { local.send(value) }
            // A second connection's publishes arrive either way: a marker that the first 100 had time to.
            let other = try NATSBridge(options: try NATSTestEnvironment.options())
            let marker = Event<Int>()
            try other.export(marker, to: subject)
            // The import's subscription reaches the server asynchronously, so an
            // early marker from another connection may find no subscriber yet:
            // send markers until one arrives.
            var markersSent = 0
            repeat {
                marker.send(-1)
                markersSent += 1
            } while !waitUntil(timeout: 0.5, { received.values.contains(-1) }) && markersSent < 20
            // Two connections are not ordered with each other: wait for everything due, and for
            // 100 ms more, in which nothing beyond it may arrive.
            let due = echo ? 100 : 0
            XCTAssertTrue(received.wait(timeout: 10) { $0.filter { $0 != -1 }.count >= due }, "echo \(echo)")
            XCTAssertFalse(
                received.wait(timeout: 0.1) { $0.filter { $0 != -1 }.count > due },
                "echo \(echo): more than \(due) arrived: \(received.values.filter { $0 != -1 }.count)")
            let markers = received.values.filter { $0 == -1 }.count
            XCTAssertEqual(received.values.filter { $0 != -1 }, echo ? Array(1...100) : [], "echo \(echo)")
            XCTAssertTrue((1...markersSent).contains(markers), "markers \(markers) of \(markersSent)")
            XCTAssertTrue(waitUntil { imported.deliveredCount == (echo ? 100 : 0) + markers })
            token.cancel()
            other.close()
            bridge.close()
        }
    }

    func testTwoProcessesThatImportAndExportOneEventDoNotBounceValues() async throws {
        let subject = NATSTestEnvironment.uniqueSubject()
        let (first, second) = try makeBridgePair()
        let firstEvent = Event<Int>()
        let secondEvent = Event<Int>()
        let atFirst = firstEvent.record()
        let atSecond = secondEvent.record()
        try first.export(firstEvent, to: subject)
        let firstImport = try first.import(subject, into: firstEvent)
        try second.export(secondEvent, to: subject)
        let secondImport = try second.import(subject, into: secondEvent)

        firstEvent.send(1)
        secondEvent.send(2)
        let firstValues = try await atFirst.values(count: 2, timeout: .seconds(10))
        let secondValues = try await atSecond.values(count: 2, timeout: .seconds(10))
        // A bounced value would arrive within a round trip; give it 20 of them.
        try await atFirst.expectNoMoreValues(within: .milliseconds(200))
        try await atSecond.expectNoMoreValues(within: .milliseconds(1))
        // Each got its own value and the other's, once (in either order).
        XCTAssertEqual(firstValues.sorted(), [1, 2])
        XCTAssertEqual(secondValues.sorted(), [1, 2])
        XCTAssertTrue(waitUntil { firstImport.deliveredCount == 1 })
        XCTAssertTrue(waitUntil { secondImport.deliveredCount == 1 })
    }

    func testAHandlerOfAnImportCanForwardToAnotherExportedEvent() async throws {
        let inbound = NATSTestEnvironment.uniqueSubject()
        let outbound = NATSTestEnvironment.uniqueSubject()
        let relay = try NATSBridge(options: try NATSTestEnvironment.options())
        let ends = try NATSBridge(options: try NATSTestEnvironment.options())
        let watcher = try NATSBridge(options: try NATSTestEnvironment.options())
        defer {
            relay.close()
            ends.close()
            watcher.close()
        }
        let source = Event<Int>()
        let relayed = Event<Int>()
        let doubled = Event<Int>()
        let sink = Event<Int>()
        let probe = Event<Int>()
        let atSink = sink.record()
        let atProbe = probe.record()
        let relaying = relayed.subscribe { doubled.send($0 * 2) }
        defer { relaying.cancel() }
        try ends.export(source, to: inbound)
        let relayImport = try relay.import(inbound, into: relayed)
        // The relay also exports the event it imports into: those values must not go out again.
        try relay.export(relayed, to: inbound)
        try relay.export(doubled, to: outbound)
        try ends.import(outbound, into: sink)
        try watcher.import(inbound, into: probe)

        // Sent from the relay's delivery thread, which stays marked as delivering `relayed`
        // between messages: `doubled` is another event, so every value is published.
        for value in 1...5 { source.send(value) }
        let sinkValues = try await atSink.values(count: 5, timeout: .seconds(10))
        let probeValues = try await atProbe.values(count: 5, timeout: .seconds(10))
        XCTAssertEqual(sinkValues, [2, 4, 6, 8, 10])
        // A value the relay published again would reach the watcher a second time.
        try await atProbe.expectNoMoreValues(within: .milliseconds(200))
        XCTAssertEqual(probeValues, [1, 2, 3, 4, 5])
        XCTAssertEqual(relayImport.deliveredCount, 5)
    }

    func testSubjectsThatNATSCannotUseAreRejected() throws {
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options())
        defer { bridge.close() }
        let event = Event<Int>()
        for subject in ["", "a.*", "a.>", "a b", "a..b", ".a", "a.", "tab\tsubject", "line\nbreak"] {
            XCTAssertThrowsError(try bridge.export(event, to: subject), "export to \(subject.debugDescription)") {
                XCTAssertEqual(($0 as? NATSError)?.kind, .invalidSubject)
            }
        }
        for pattern in ["", "a.>.b", "a.b*", "a b.>", "a..*"] {
            XCTAssertThrowsError(try bridge.import(pattern, into: event), "import of \(pattern.debugDescription)") {
                XCTAssertEqual(($0 as? NATSError)?.kind, .invalidSubject)
            }
        }
        XCTAssertNoThrow(try bridge.import("a.*.c.>", into: event))
    }

    func testCloseStopsExportsAndImportsAndLaterCallsThrowClosed() throws {
        let log = StatusLog()
        let bridge = try NATSBridge(options: try NATSTestEnvironment.options(), status: log.event)
        guard case .connected(let url) = log.values.first else {
            return XCTFail("first status \(log.values)")
        }
        XCTAssertEqual(url, try NATSTestEnvironment.url() + "")
        let event = Event<Int>()
        let export = try bridge.export(event, to: NATSTestEnvironment.uniqueSubject())
        bridge.close()
        bridge.close()
        XCTAssertTrue(bridge.isClosed)
        XCTAssertEqual(log.values.last, .closed)
        XCTAssertEqual(log.count { $0 == .closed }, 1)
        event.send(1)  // the export was cancelled: no publish, no failure
        XCTAssertEqual(export.failedPublishes, 0)
        XCTAssertEqual(event.subscribersCount, 0)
        XCTAssertThrowsError(try bridge.export(event, to: "a")) { XCTAssertEqual(($0 as? NATSError)?.kind, .closed) }
        XCTAssertThrowsError(try bridge.import("a", into: event)) { XCTAssertEqual(($0 as? NATSError)?.kind, .closed) }
    }
}
