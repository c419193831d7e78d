import Dispatch
import Foundation
import XCTest

@testable import ObserverSwift

protocol DownloadObserving: AnyObject {
    func downloaded(_ bytes: Int)
}

/// A main-actor class whose conformance is isolated (the fix the Swift 6
/// compiler suggests for a main-actor class adopting a plain protocol).
@MainActor
final class DownloadScreen: Sendable {
    var shown: [Int] = []
}

extension DownloadScreen: @MainActor DownloadObserving {
    func downloaded(_ bytes: Int) { shown.append(bytes) }
}

final class RegistryDeliveryTests: XCTestCase {
    func testCase1MainActorObserverReachedByWithObservers() {
        let registry = ObserverRegistry()
        let sink = ProgressSink()
        registry.addObserver(sink, delivery: .mainActor)
        registry.withObservers { (observer: ProgressObserving) in observer.progressed(1) }
        let sent = expectation(description: "background send")
        Thread {
            registry.withObservers { (observer: ProgressObserving) in observer.progressed(2) }
            sent.fulfill()
        }.start()
        waitUntilFulfilled([sent], timeout: 30)
        let delivered = expectation(description: "main queue drained")
        DispatchQueue.main.async { delivered.fulfill() }
        waitUntilFulfilled([delivered], timeout: 30)
        print("CASE1 calls:", sink.received.values)
        XCTAssertEqual(sink.received.values.sorted(), [1, 2])
    }

    func testCase2QueueObserverReachedByWithObservers() {
        let registry = ObserverRegistry()
        let sink = ProgressSink()
        let queue = DispatchQueue(label: "case2")
        registry.addObserver(sink, delivery: .queue(queue))
        registry.withObservers { (observer: ProgressObserving) in observer.progressed(1) }
        queue.sync {}
        print("CASE2 calls:", sink.received.values)
        XCTAssertEqual(sink.received.values, [1])
    }

    func testCase3KeyedMainActorObserverReachedByWithKeyedObservers() {
        let registry = KeyedObserverRegistry()
        let sink = ProgressSink()
        registry.addKeyedObserver(key: "k", sink, delivery: .mainActor)
        registry.withKeyedObservers(key: "k") { (_: String, observer: ProgressObserving) in observer.progressed(1) }
        let delivered = expectation(description: "main queue drained")
        DispatchQueue.main.async { delivered.fulfill() }
        waitUntilFulfilled([delivered], timeout: 30)
        print("CASE3 calls:", sink.received.values)
        XCTAssertEqual(sink.received.values, [1])
    }

    @MainActor
    func testCase4IsolatedConformanceFirstSentFromBackground() {
        let registry = ObserverRegistry()
        let screen = DownloadScreen()
        registry.addObserver(screen)
        let sent = expectation(description: "background send")
        Thread {
            registry.withObservers { (observer: DownloadObserving) in
                print("CASE4 background call, main thread:", Thread.isMainThread)
            }
            sent.fulfill()
        }.start()
        wait(for: [sent], timeout: 30)
        registry.withObservers { (observer: DownloadObserving) in observer.downloaded(7) }
        print("CASE4 shown:", screen.shown)
        XCTAssertEqual(screen.shown, [7])
    }
}
