import Foundation
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

final class HasObserversTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        LeakSanitizerSupport.keepMainQueueSideTableReachable()
    }

    typealias Recorder = NotificationsSupport.Recorder
    typealias Thing = NotificationsSupport.Thing

    /// Adopts the protocol with no stored property at all.
    final class Screen: HasObservers, @unchecked Sendable {}

    final class Model: KeyPathObservable {
        @ObservableProperty var level = 0
    }

    func testGroupActivatesAndDeactivatesTogether() {
        let center = NotificationCenter()
        let first = NotificationsSupport.uniqueName()
        let second = NotificationsSupport.uniqueName()
        let calls = Recorder<Notification.Name>()
        let screen = Screen()
        NotificationObserver(forName: first, queue: nil, center: center) { calls.append($0.name) }.add(to: screen)
        NotificationObserver(forName: second, queue: nil, center: center) { calls.append($0.name) }.add(to: screen)
        XCTAssertEqual(screen.observers.count, 2)

        center.post(name: first, object: nil)
        XCTAssertEqual(calls.count, 0, "adding does not activate")
        screen.activateObservers()
        center.post(name: first, object: nil)
        center.post(name: second, object: nil)
        XCTAssertEqual(calls.all, [first, second])
        screen.deactivateObservers()
        center.post(name: first, object: nil)
        center.post(name: second, object: nil)
        XCTAssertEqual(calls.count, 2)
        XCTAssertTrue(screen.observers.allSatisfy { !$0.isActive })
    }

    func testAddObserversAndChainingKeepTheObserverAlive() {
        let center = NotificationCenter()
        let name = NotificationsSupport.uniqueName()
        let calls = Recorder<Int>()
        let screen = Screen()
        weak var kept: NotificationObserver?
        do {
            let observer = NotificationObserver(forName: name, queue: nil, center: center) { _ in calls.append(1) }
                .add(to: screen)
                .activate()
            kept = observer
            NotificationObserver(forName: name, queue: nil, center: center) { _ in calls.append(2) }
                .add(to: screen)
        }
        XCTAssertNotNil(kept, "the group holds its observers")
        center.post(name: name, object: nil)
        XCTAssertEqual(calls.all, [1], "the second one was added inactive")
        screen.activateObservers()
        center.post(name: name, object: nil)
        XCTAssertEqual(calls.all.sorted(), [1, 1, 2])
    }

    func testNoGroupMeansActivateAndDeactivateAreNoOps() {
        let screen = Screen()
        screen.activateObservers()
        screen.deactivateObservers()
        XCTAssertTrue(screen.observers.isEmpty)
        XCTAssertFalse(ObserverOwnerTable.shared.hasEntry(for: ObjectIdentifier(screen)), "no group created")
    }

    func testGroupGoesAwayWithItsOwner() throws {
        let center = NotificationCenter()
        let name = NotificationsSupport.uniqueName()
        let calls = Recorder<Int>()
        weak var observerOfDeadOwner: NotificationObserver?
        let ownerIdentifier: ObjectIdentifier
        do {
            let screen = Screen()
            ownerIdentifier = ObjectIdentifier(screen)
            let observer = NotificationObserver(forName: name, queue: nil, center: center) { _ in calls.append(1) }
                .add(to: screen)
            screen.activateObservers()
            observerOfDeadOwner = observer
            center.post(name: name, object: nil)
            XCTAssertEqual(calls.count, 1)
            XCTAssertTrue(ObserverOwnerTable.shared.hasEntry(for: ownerIdentifier))
        }
        // The owner is gone; its group may still be in the table, but
        // nothing is delivered on its behalf and the observer deregisters.
        center.post(name: name, object: nil)
        XCTAssertEqual(calls.count, 1, "no handler runs for a deallocated owner")
        XCTAssertEqual(observerOfDeadOwner?.isActive, false, "the delivery deactivated it")

        // The next table access removes the entry.
        let other = Screen()
        other.activateObservers()
        XCTAssertFalse(ObserverOwnerTable.shared.hasEntry(for: ownerIdentifier))
        try ObserverCore.reclaimNow()
        XCTAssertNil(observerOfDeadOwner, "the group's slot released its observer")
    }

    func testSweepDeregistersObserversOfDeadOwnersThatNeverFired() throws {
        let center = NotificationCenter()
        let name = NotificationsSupport.uniqueName()
        weak var orphan: NotificationObserver?
        do {
            let screen = Screen()
            orphan = NotificationObserver(forName: name, queue: nil, center: center) { _ in }
                .add(to: screen)
                .activate()
            XCTAssertEqual(orphan?.isActive, true)
        }
        XCTAssertGreaterThanOrEqual(ObserverOwners.sweep(), 1)
        XCTAssertEqual(orphan?.isActive ?? false, false, "deactivated by the sweep, before any post")
        XCTAssertEqual(orphan?.centerReceipts.count ?? 0, 0, "its blocks left the center")
        try ObserverCore.reclaimNow()
        XCTAssertNil(orphan)
    }

    func testPeriodicSweepRemovesADeadOwnersGroupWithoutAnyAccess() {
        let center = NotificationCenter()
        weak var orphan: NotificationObserver?
        let ownerIdentifier: ObjectIdentifier
        do {
            let screen = Screen()
            ownerIdentifier = ObjectIdentifier(screen)
            orphan = NotificationObserver(forName: .init("periodic"), queue: nil, center: center) { _ in }
                .add(to: screen)
                .activate()
        }
        // `hasEntry` does not sweep: only the periodic sweep can remove it.
        // A deadline of three intervals against hangs, not a timing claim.
        let deadline = Date().addingTimeInterval(3 * ObserverOwners.sweepInterval)
        while ObserverOwnerTable.shared.hasEntry(for: ownerIdentifier) && Date() < deadline {
            usleep(50_000)
        }
        XCTAssertFalse(ObserverOwnerTable.shared.hasEntry(for: ownerIdentifier))
        XCTAssertEqual(orphan?.isActive ?? false, false, "the sweep deactivated it")
    }

    func testReadingCountSweeps() {
        do {
            let screen = Screen()
            NotificationObserver(forName: .init("count"), center: NotificationCenter()) { _ in }.add(to: screen)
        }
        let live = Screen()
        NotificationObserver(forName: .init("count"), center: NotificationCenter()) { _ in }.add(to: live)
        XCTAssertGreaterThanOrEqual(ObserverOwners.count, 1)
        XCTAssertEqual(ObserverOwners.sweep(), 0, "count already swept the dead owner's group")
        withExtendedLifetime(live) {}
    }

    func testKeyPathObserversJoinTheGroupAndDieWithTheOwner() {
        let model = Model()
        let levels = Recorder<Int>()
        do {
            let screen = Screen()
            model.observe(\.$level) { _, new in levels.append(new) }.add(to: screen)
            model.level = 1
            screen.deactivateObservers()
            model.level = 2
            screen.activateObservers()
            model.level = 3
            XCTAssertEqual(levels.all, [1, 3])
        }
        model.level = 4
        XCTAssertEqual(levels.all, [1, 3], "not delivered for a deallocated owner")
        XCTAssertEqual(model.$level.subscribersCount, 0, "the observer left the property's list")
    }

    func testObserverAddedToTwoOwnersIsGatedByTheFirst() {
        let center = NotificationCenter()
        let name = NotificationsSupport.uniqueName()
        let calls = Recorder<Int>()
        let second = Screen()
        do {
            let first = Screen()
            NotificationObserver(forName: name, queue: nil, center: center) { _ in calls.append(1) }
                .add(to: first)
                .add(to: second)
                .activate()
            center.post(name: name, object: nil)
        }
        center.post(name: name, object: nil)
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual(second.observers.count, 1)
    }

    func testConcurrentAddsFromManyThreadsAreAllKept() {
        let center = NotificationCenter()
        let name = NotificationsSupport.uniqueName()
        let calls = Recorder<Int>()
        let screen = Screen()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for _ in 0..<25 {
                NotificationObserver(forName: name, queue: nil, center: center) { _ in
                    calls.append(worker)
                }.add(to: screen)
                if worker % 2 == 0 { screen.activateObservers() } else { screen.deactivateObservers() }
            }
        }
        XCTAssertEqual(screen.observers.count, 200)
        screen.activateObservers()
        center.post(name: name, object: nil)
        XCTAssertEqual(calls.count, 200)
    }
}
