import Foundation
import ObserverNATS
import ObserverSwift
import ObserverSwiftTesting
import ObserverTestSupport
import XCTest

/// NATS exports and imports in `ObserverCore.liveSubscriptions` and the leak
/// check, and a recorder of what an import delivered.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSTrackingTests: XCTestCase {
    func testExportsAndImportsAreListedWithTheirSubjectsAndLines() async throws {
        ObserverCore.isTrackingSubscriptions = true
        let (publisher, subscriber) = try makeBridgePair()
        let subject = NATSTestEnvironment.uniqueSubject()
        let local = Event<Int>()
        let remote = Event<Int>()
        let exportLine = #line + 1
        let export = try publisher.export(local, to: subject)
        let importLine = #line + 1
        let imported = try subscriber.import(subject, into: remote)
        let listed = ObserverCore.liveSubscriptions.filter { $0.detail == "subject \(subject)" }
        XCTAssertEqual(listed.map(\.kind), [.natsExport, .natsImport])
        XCTAssertEqual(listed.map(\.sourceType), ["Event<Int>", "Event<Int>"])
        XCTAssertEqual(listed.map(\.delivery), ["synchronous", "NATS at most once"])
        XCTAssertEqual(
            listed.map(\.site),
            [
                "ObserverNATSTests/NATSTrackingTests.swift:\(exportLine)",
                "ObserverNATSTests/NATSTrackingTests.swift:\(importLine)",
            ])
        export.cancel()
        imported.cancel()
        XCTAssertEqual(ObserverCore.liveSubscriptions.filter { $0.detail == "subject \(subject)" }.count, 0)
    }

    func testTheRecorderRecordsWhatAnImportDelivered() async throws {
        let (publisher, subscriber) = try makeBridgePair()
        let subject = NATSTestEnvironment.uniqueSubject()
        let local = Event<Int>()
        let remote = Event<Int>()
        let received = remote.record()
        let export = try publisher.export(local, to: subject)
        let imported = try subscriber.import(subject, into: remote)
        defer {
            export.cancel()
            imported.cancel()
        }
        for value in 1...3 { local.send(value) }
        let values = try await received.values(count: 3, timeout: .seconds(10))
        XCTAssertEqual(values, [1, 2, 3])
    }

    func testTheLeakCheckNamesAnExportLeftRunning() async throws {
        let (publisher, _) = try makeBridgePair()
        let subject = NATSTestEnvironment.uniqueSubject()
        let local = Event<Int>()
        var kept: NATSExport?
        var line = 0
        do {
            try await expectNoLeakedSubscriptions {
                line = #line + 1
                kept = try publisher.export(local, to: subject)
            }
            XCTFail("the export left running went unnoticed")
        } catch {
            XCTAssertEqual(
                "\(error)",
                """
                1 subscription leaked (still active):
                  - NATS export on Event<Int>, synchronous, made at ObserverNATSTests/NATSTrackingTests.swift:\(line), \
                subject \(subject), 0 deliveries
                """)
        }
        kept?.cancel()
    }
}
