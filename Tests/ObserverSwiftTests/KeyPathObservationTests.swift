import Dispatch
import Foundation
import XCTest

@testable import ObserverSwift

final class KeyPathObservationTests: XCTestCase {
    typealias Recorder = NotificationsSupport.Recorder

    final class Document: KeyPathObservable, @unchecked Sendable {
        @ObservableProperty var title = "Untitled"
        @ObservableProperty var pages = 0
    }

    class Base: KeyPathObservable {
        @ObservableProperty var name = "base"
    }

    final class Derived: Base {
        @ObservableProperty var extra = 1
    }

    struct Change: Equatable, Sendable {
        let old: String
        let new: String
    }

    func testObserveReceivesOldAndNewValues() {
        let document = Document()
        let changes = Recorder<Change>()
        let observer = document.observe(\.$title) { old, new in changes.append(Change(old: old, new: new)) }
        XCTAssertTrue(observer.isActive, "observe starts at once by default")
        document.title = "Draft"
        document.title = "Final"
        XCTAssertEqual(changes.all, [Change(old: "Untitled", new: "Draft"), Change(old: "Draft", new: "Final")])
        XCTAssertEqual(document.title, "Final")
    }

    func testObservePropertiesIndependently() {
        let document = Document()
        let pages = Recorder<Int>()
        let observer = document.observe(\.$pages) { _, new in pages.append(new) }
        document.title = "ignored"
        document.pages += 2
        XCTAssertEqual(pages.all, [2])
        withExtendedLifetime(observer) {}
    }

    func testTwoObserversOfOnePropertyAndWritesThroughTheProjectedValue() {
        let document = Document()
        let firstSeen = Recorder<Change>()
        let secondSeen = Recorder<Change>()
        let first = document.observe(\.$title) { old, new in firstSeen.append(Change(old: old, new: new)) }
        let second = document.observe(\.$title) { old, new in secondSeen.append(Change(old: old, new: new)) }
        document.$title.value = "A"
        XCTAssertEqual(firstSeen.all, [Change(old: "Untitled", new: "A")])
        XCTAssertEqual(secondSeen.all, firstSeen.all)
        XCTAssertEqual(document.$title.subscribersCount, 2)
        withExtendedLifetime((first, second)) {}
    }

    func testActivateFalseAndIdempotentActivateDeactivate() {
        let document = Document()
        let calls = Recorder<Int>()
        let observer = document.observe(\.$pages, activate: false) { _, new in calls.append(new) }
        XCTAssertFalse(observer.isActive)
        document.pages = 1
        XCTAssertEqual(calls.count, 0)
        XCTAssertTrue(observer.activate() === observer)
        observer.activate()
        document.pages = 2
        XCTAssertEqual(calls.all, [2], "activating twice delivers once")
        observer.deactivate()
        observer.deactivate()
        document.pages = 3
        XCTAssertEqual(calls.all, [2])
        observer.activate()
        document.pages = 4
        XCTAssertEqual(calls.all, [2, 4])
        XCTAssertEqual(document.$pages.subscribersCount, 1)
    }

    func testReleasedObserverStopsAndDoesNotKeepTheObjectAlive() throws {
        let calls = Recorder<Int>()
        weak var released: Document?
        var document: Document? = Document()
        released = document
        var observer: KeyPathObserver? = document!.observe(\.$pages) { _, new in calls.append(new) }
        document = nil
        XCTAssertNil(released, "an observer does not retain the observed object")
        XCTAssertTrue(observer!.isActive)

        let other = Document()
        observer = other.observe(\.$pages) { _, new in calls.append(new) }
        other.pages = 5
        observer = nil
        other.pages = 6
        XCTAssertEqual(calls.all, [5], "a released observer is not called")
        XCTAssertEqual(other.$pages.subscribersCount, 0)
        withExtendedLifetime(observer) {}
    }

    func testInheritedPropertyResolvesThroughASubclassKeyPath() {
        let derived = Derived()
        let names = Recorder<String>()
        let extras = Recorder<Int>()
        let first = derived.observe(\.$name) { _, new in names.append(new) }
        let second = derived.observe(\.$extra) { _, new in extras.append(new) }
        derived.name = "derived"
        derived.extra = 2
        XCTAssertEqual(names.all, ["derived"])
        XCTAssertEqual(extras.all, [2])
        withExtendedLifetime((first, second)) {}
    }

    func testQueueDeliveryAndNothingAfterDeactivate() {
        let document = Document()
        let queue = DispatchQueue(label: "keypath-tests")
        let onQueue = Recorder<Int>()
        let observer = document.observe(\.$pages, delivery: .queue(queue)) { _, new in
            dispatchPrecondition(condition: .onQueue(queue))
            onQueue.append(new)
        }
        document.pages = 1
        queue.sync {}
        XCTAssertEqual(onQueue.all, [1])

        queue.suspend()
        document.pages = 2  // enqueued behind the suspension
        observer.deactivate()
        queue.resume()
        queue.sync {}
        XCTAssertEqual(onQueue.all, [1], "a queued call does not run after deactivate()")
    }

    func testHandlerMayDeactivateItself() {
        let document = Document()
        let calls = Recorder<Int>()
        nonisolated(unsafe) var observer: KeyPathObserver?
        // The handler captures `observer`, which holds the handler: release
        // it at the end to break the cycle.
        defer { observer = nil }
        observer = document.observe(\.$pages) { _, new in
            calls.append(new)
            observer?.deactivate()
        }
        document.pages = 1
        document.pages = 2
        XCTAssertEqual(calls.all, [1])
    }

    func testEveryWriteNotifiesEvenWhenEqual() {
        let document = Document()
        let calls = Recorder<Int>()
        let observer = document.observe(\.$pages) { _, new in calls.append(new) }
        document.pages = 0
        document.pages = 0
        XCTAssertEqual(calls.all, [0, 0])
        withExtendedLifetime(observer) {}
    }

    func testConcurrentModifyNotifiesEveryTransitionExactly() {
        let document = Document()
        let transitions = Recorder<Int>()
        let broken = Recorder<Int>()
        let observer = document.observe(\.$pages) { old, new in
            transitions.append(new)
            if new != old + 1 { broken.append(old) }
        }
        let threads = 4
        let rounds = 2_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<rounds { document.$pages.modify { $0 += 1 } }
        }
        XCTAssertEqual(document.pages, threads * rounds)
        XCTAssertEqual(transitions.count, threads * rounds)
        XCTAssertEqual(Set(transitions.all).count, threads * rounds, "each transition reported once")
        XCTAssertEqual(broken.count, 0, "every (old, new) pair is one step")
        withExtendedLifetime(observer) {}
    }

    func testConcurrentWritersAndTogglingObserverCountExactlyForAStableObserver() {
        let document = Document()
        let stable = Recorder<Int>()
        let stableObserver = document.observe(\.$pages) { _, new in stable.append(new) }
        let toggled = document.observe(\.$pages) { _, _ in }
        let writes = 3 * 1_000
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            if worker == 3 {
                for round in 0..<1_000 {
                    if round % 2 == 0 { toggled.deactivate() } else { toggled.activate() }
                }
            } else {
                for value in 0..<1_000 { document.pages = value }
            }
        }
        XCTAssertEqual(stable.count, writes)
        withExtendedLifetime(stableObserver) {}
    }

}
