import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// Binding to a stream that exists: what a `NATSStream` leaves nil is the server's, what it states
/// is compared.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSStreamBindingTests: XCTestCase {
    func testUnstatedSettingsAreTheServersAndOnlyStatedOnesAreCompared() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        var options = NATSOptions(servers: [server.url])
        options.reconnectWait = .milliseconds(50)
        let creator = try NATSBridge(options: options)
        let binder = try NATSBridge(options: options)
        defer {
            creator.close()
            binder.close()
        }
        let configured = NATSStream(
            name: "BOUND", subjects: ["bound.>"], duplicateWindow: .seconds(30), replicas: 1, storage: .memory,
            retention: .interest, maxAge: .seconds(3600))
        try creator.export(Event<Int>(), to: "bound.created", delivery: .atLeastOnce(stream: configured))

        // Name and subjects only: binds, whatever the stream's other settings are.
        let byName = NATSStream(name: "BOUND", subjects: ["bound.>"])
        XCTAssertNil(byName.replicas)
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        try binder.import("bound.values", into: remote, delivery: .atLeastOnce(stream: byName, durable: "reader"))
        let local = Event<Int>()
        try binder.export(local, to: "bound.values", delivery: .atLeastOnce(stream: byName))
        for value in 1...3 { local.send(value) }
        XCTAssertEqual(binder.flush(timeout: .seconds(10)), 0)
        XCTAssertTrue(waitUntil { received.values == [1, 2, 3] }, "\(received.values)")

        // Stated settings that match bind too.
        var matching = byName
        matching.storage = .memory
        matching.retention = .interest
        matching.maxAge = .seconds(3600)
        matching.duplicateWindow = .seconds(30)
        matching.replicas = 1
        try binder.export(Event<Int>(), to: "bound.matching", delivery: .atLeastOnce(stream: matching))

        // A stated setting that differs is an error naming that setting alone.
        var differing = byName
        differing.storage = .file
        XCTAssertThrowsError(
            try binder.export(Event<Int>(), to: "bound.differing", delivery: .atLeastOnce(stream: differing))
        ) { error in
            XCTAssertEqual((error as? NATSError)?.kind, .jetStream)
            XCTAssertTrue(
                "\(error)".hasSuffix("stream BOUND exists with another configuration: storage memory (wanted file)"),
                "\(error)")
        }
        differing = byName
        differing.maxAge = .zero
        XCTAssertThrowsError(
            try binder.export(Event<Int>(), to: "bound.differing", delivery: .atLeastOnce(stream: differing))
        ) { error in
            XCTAssertTrue("\(error)".hasSuffix("max age 3600.0 s (wanted unlimited)"), "\(error)")
        }
    }

    func testAnImportNamingAnExistingR3StreamByNameAndSubjectsBindsToIt() throws {
        let cluster = try OwnedNATSCluster()
        defer { cluster.stop() }
        _ = try cluster.waitUntilReady()
        var options = NATSOptions(servers: cluster.urls)
        options.reconnectWait = .milliseconds(100)
        let creator = try NATSBridge(options: options)
        let binder = try NATSBridge(options: options)
        defer {
            creator.close()
            binder.close()
        }
        let replicated = NATSStream(name: "R3BOUND", subjects: ["r3bound.>"], replicas: 3)
        try creator.export(Event<Int>(), to: "r3bound.created", delivery: .atLeastOnce(stream: replicated))

        let byName = NATSStream(name: "R3BOUND", subjects: ["r3bound.>"])
        let remote = Event<Int>()
        let received = Received<Int>()
        let token = remote.subscribe { received.append($0) }
        defer { token.cancel() }
        try binder.import("r3bound.values", into: remote, delivery: .atLeastOnce(stream: byName, durable: "reader"))
        let local = Event<Int>()
        try binder.export(local, to: "r3bound.values", delivery: .atLeastOnce(stream: byName))
        for value in 1...3 { local.send(value) }
        XCTAssertEqual(binder.flush(timeout: .seconds(20)), 0)
        XCTAssertTrue(waitUntil(timeout: 20) { received.values == [1, 2, 3] }, "\(received.values)")

        var single = byName
        single.replicas = 1
        XCTAssertThrowsError(
            try binder.export(Event<Int>(), to: "r3bound.single", delivery: .atLeastOnce(stream: single))
        ) { error in
            XCTAssertTrue("\(error)".hasSuffix("exists with another configuration: replicas 3 (wanted 1)"), "\(error)")
        }
    }

    func testUnstatedSettingsOfANewStreamAreTheDocumentedDefaults() throws {
        let server = try OwnedNATSServer()
        defer { server.stop() }
        let bridge = try NATSBridge(options: NATSOptions(servers: [server.url]))
        defer { bridge.close() }
        try bridge.export(
            Event<Int>(), to: "fresh.a",
            delivery: .atLeastOnce(stream: NATSStream(name: "FRESH", subjects: ["fresh.>"])))
        // The stream the bridge created has every default: stating each of them binds.
        let defaults = NATSStream(
            name: "FRESH", subjects: ["fresh.>"], duplicateWindow: NATSStream.defaultDuplicateWindow, replicas: 1,
            storage: .file, retention: .limits, maxAge: .zero)
        try bridge.export(Event<Int>(), to: "fresh.b", delivery: .atLeastOnce(stream: defaults))
    }
}
