import Dispatch
import Foundation
import ObserverEngine
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// An `ObserverRegistry` makes nothing until its first observer: its writer
/// state (lock, identity table, views) is made by the first add and
/// published by one word, and its one pending synchronous registration is
/// held inline until a second add or a send moves it into the table. These
/// tests cover the empty registry, the inline form, the move into the table,
/// and the first add racing a send and a second add.
final class RegistryFirstObserverTests: XCTestCase {
    /// Counts its calls.
    final class CountingAlpha: AlphaObserver, Sendable {
        let calls = AtomicCounter()
        func alpha(_ value: Int) { calls.increment() }
    }

    /// A flag set with release and read with acquire.
    final class PublishedFlag: Sendable {
        private let word = HeapAtomicWord<Bool>(false)
        func set() { word.store(true, ordering: .releasing) }
        var isSet: Bool { word.load(ordering: .acquiring) }
    }

    func testAnEmptyRegistryMakesNothingWhateverIsAsked() {
        let registry = ObserverRegistry()
        let stranger = AlphaOnly("stranger")
        registry.withObservers { (_: AlphaObserver) in XCTFail("an empty registry called an observer") }
        registry.withObserversHere { (_: AlphaObserver) in XCTFail("an empty registry called an observer") }
        XCTAssertFalse(registry.removeObserver(stranger))
        XCTAssertFalse(registry.contains(stranger))
        XCTAssertEqual(registry.observerCount, 0)
        XCTAssertEqual(registry.removeAllObservers(), 0)
        XCTAssertTrue(registry.isEmpty)
        XCTAssertEqual(registry.entryCount, 0)
        XCTAssertEqual(registry.storedCount, 0)
        XCTAssertNil(registry.existingView(for: (any AlphaObserver).self))
        XCTAssertNil(registry.words.viewHead.plainValue, "a send to an empty registry makes no view")
        XCTAssertFalse(registry.hasWriterState, "nothing was made for an empty registry")

        let token = registry.addObserver(stranger)
        XCTAssertTrue(registry.hasWriterState, "the first add made the writer state")
        XCTAssertTrue(token.isActive)
        var calls = 0
        registry.withObserversHere { (_: AlphaObserver) in calls += 1 }
        XCTAssertEqual(calls, 1)
    }

    func testTheWriterStateWordAndTheInlineRegistrationHaveTheLayoutTheCodeAssumes() {
        typealias Words = ObserverRegistry.Words
        XCTAssertEqual(MemoryLayout<Words>.offset(of: \.viewHead), Words.viewHeadOffset)
        XCTAssertEqual(MemoryLayout<Words>.offset(of: \.hasPendingAdds), Words.hasPendingAddsOffset)
        XCTAssertEqual(MemoryLayout<Words>.offset(of: \.storesAddsAtOnce), Words.storesAddsAtOnceOffset)
        XCTAssertEqual(MemoryLayout<Words>.offset(of: \.writerState), Words.writerStateOffset)
        XCTAssertEqual(
            MemoryLayout<UnownedObserver?>.size, MemoryLayout<UnownedObserver>.size,
            "the inline registration's optional needs no tag")
    }

    func testTheInlineRegistrationAnswersLikeAnyOther() {
        let registry = ObserverRegistry()
        let alpha = AlphaOnly("alpha")
        let token = registry.addObserver(alpha)
        XCTAssertTrue(token.isActive)
        XCTAssertTrue(registry.contains(alpha))
        XCTAssertEqual(registry.entryCount, 1)
        XCTAssertEqual(registry.storedCount, 0, "held inline, not stored before a send")
        XCTAssertFalse(registry.addObserver(alpha).isActive, "a repeated add is a no-op")
        XCTAssertEqual(registry.observerCount, 1)
        registry.withObserversHere { (observer: AlphaObserver) in observer.alpha(1) }
        registry.withObserversHere { (observer: AlphaObserver) in observer.alpha(2) }
        XCTAssertEqual(alpha.recorded, ["alpha 1", "alpha 2"])
        XCTAssertEqual(registry.storedCount, 1, "the send stored it")
        XCTAssertTrue(token.isActive)
        XCTAssertTrue(token.cancel())
        registry.withObserversHere { (observer: AlphaObserver) in observer.alpha(3) }
        XCTAssertEqual(alpha.recorded, ["alpha 1", "alpha 2"])
    }

    func testASecondAddMovesTheInlineRegistrationIntoTheTableWithItsToken() {
        let registry = ObserverRegistry()
        let first = AlphaOnly("first")
        let second = AlphaOnly("second")
        let firstToken = registry.addObserver(first)
        let secondToken = registry.addObserver(second)
        XCTAssertEqual(registry.entryCount, 2)
        XCTAssertTrue(firstToken.isActive)
        XCTAssertTrue(secondToken.isActive)
        XCTAssertTrue(firstToken.cancel(), "the first token still cancels its registration")
        XCTAssertFalse(firstToken.isActive)
        registry.withObserversHere { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(first.recorded, [])
        XCTAssertEqual(second.recorded, ["alpha 1"])
        XCTAssertTrue(secondToken.isActive)
    }

    func testRemovingTheInlineRegistrationLeavesNothingPending() {
        let registry = ObserverRegistry()
        let alpha = AlphaOnly("alpha")
        registry.addObserver(alpha)
        XCTAssertTrue(registry.words.hasPendingAdds.plainValue)
        XCTAssertTrue(registry.removeObserver(alpha))
        XCTAssertFalse(registry.words.hasPendingAdds.plainValue, "nothing left to store")
        XCTAssertFalse(registry.removeObserver(alpha))
        XCTAssertFalse(registry.contains(alpha))
        registry.withObserversHere { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(alpha.recorded, [])
        registry.addObserver(alpha)
        registry.withObserversHere { (observer: AlphaObserver) in observer.alpha(2) }
        XCTAssertEqual(alpha.recorded, ["alpha 2"])
    }

    func testAnOldTokenNeverCancelsALaterInlineRegistrationOfTheSameObserver() {
        let registry = ObserverRegistry()
        let alpha = AlphaOnly("alpha")
        let removedByRemoveAll = registry.addObserver(alpha)
        XCTAssertEqual(registry.removeAllObservers(), 1)
        XCTAssertFalse(removedByRemoveAll.isActive)
        let removedByRemove = registry.addObserver(alpha)
        XCTAssertTrue(registry.removeObserver(alpha))
        let current = registry.addObserver(alpha)
        XCTAssertFalse(removedByRemoveAll.cancel())
        XCTAssertFalse(removedByRemove.cancel())
        XCTAssertTrue(current.isActive)
        registry.withObserversHere { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(alpha.recorded, ["alpha 1"])
    }

    func testADeadInlineObserverIsDroppedAndNeverCalled() {
        let registry = ObserverRegistry()
        let ledger = LivenessLedger()
        var transient: TransientAlpha? = TransientAlpha(ledger)
        let token = registry.addObserver(transient!)
        XCTAssertTrue(token.isActive)
        transient = nil
        XCTAssertFalse(token.isActive, "a dead observer's registration has ended")
        XCTAssertEqual(registry.entryCount, 1, "not swept yet")
        XCTAssertEqual(registry.observerCount, 0)
        XCTAssertEqual(registry.entryCount, 0, "counting swept it")
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertEqual(ledger.calls.load(ordering: .relaxed), 0)
        XCTAssertFalse(token.cancel(), "a dead observer's cancel removes nothing")
    }

    func testAFirstObserverWithAnotherDeliveryIsCalledWhereItSays() {
        let registry = ObserverRegistry()
        let queue = DispatchQueue(label: "RegistryFirstObserverTests.queue")
        let alpha = AlphaOnly("alpha")
        registry.addObserver(alpha, delivery: .queue(queue))
        XCTAssertEqual(registry.entryCount, 1)
        let delivered = expectation(description: "delivered on the queue")
        registry.withObservers { (observer: AlphaObserver) in
            dispatchPrecondition(condition: .onQueue(queue))
            observer.alpha(1)
            delivered.fulfill()
        }
        waitUntilFulfilled([delivered], timeout: 10)
        XCTAssertEqual(alpha.recorded, ["alpha 1"])
    }

    func testAKeyedRegistrysPerKeyRegistryStoresItsFirstObserverAtOnce() {
        let keyed = KeyedObserverRegistry()
        let alpha = AlphaOnly("alpha")
        keyed.addObserver(alpha, key: "K")
        var seen: [String] = []
        let notCalled = keyed.withObserversCallableHere(forKey: "K") { (key: String, observer: AlphaObserver) in
            seen.append(key)
            observer.alpha(1)
        }
        XCTAssertEqual(notCalled, 0)
        XCTAssertEqual(seen, ["K"])
        XCTAssertEqual(alpha.recorded, ["alpha 1"])
    }

    /// The first add, a second add and sends on three threads at once, many
    /// times over, each on a new registry. Accounting: a send that starts
    /// after an add returned calls that observer exactly once; no send calls
    /// an observer twice; after both adds, every send calls both.
    func testTheFirstObserversArrivalRacingASendAndASecondAdd() {
        let rounds = 2_000
        let violations = AtomicCounter()
        let sendsWithBoth = AtomicCounter()
        for round in 0..<rounds {
            let registry = ObserverRegistry()
            let first = CountingAlpha()
            let second = CountingAlpha()
            let firstAdded = PublishedFlag()
            let secondAdded = PublishedFlag()
            let callableHere = round % 2 == 1
            runOnThreads(3) { thread in
                switch thread {
                case 0:
                    registry.addObserver(first)
                    firstAdded.set()
                case 1:
                    registry.addObserver(second)
                    secondAdded.set()
                default:
                    var bothSeenBefore = false
                    while !bothSeenBefore {
                        let firstBefore = firstAdded.isSet
                        let secondBefore = secondAdded.isSet
                        bothSeenBefore = firstBefore && secondBefore
                        let firstCalls = first.calls.value
                        let secondCalls = second.calls.value
                        if callableHere {
                            let notCalled = registry.withObserversCallableHere { (observer: AlphaObserver) in
                                observer.alpha(1)
                            }
                            if notCalled != 0 { violations.increment() }
                        } else {
                            registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
                        }
                        // Synchronous observers were called before the send returned.
                        let firstDelta = first.calls.value - firstCalls
                        let secondDelta = second.calls.value - secondCalls
                        if firstDelta > 1 || secondDelta > 1 { violations.increment() }
                        if firstBefore && firstDelta != 1 { violations.increment() }
                        if secondBefore && secondDelta != 1 { violations.increment() }
                        if bothSeenBefore { sendsWithBoth.increment() }
                    }
                }
            }
            XCTAssertEqual(registry.observerCount, 2)
            let firstCalls = first.calls.value
            let secondCalls = second.calls.value
            registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
            XCTAssertEqual(first.calls.value, firstCalls + 1)
            XCTAssertEqual(second.calls.value, secondCalls + 1)
            if violations.value > 0 {
                XCTFail("round \(round): \(violations.value) sends broke the delivery accounting")
                return
            }
        }
        XCTAssertEqual(sendsWithBoth.value, rounds, "each round ended with one send after both adds")
    }

    /// The first add racing a removal of the same observer, a second add
    /// and sends: whatever the interleaving, the registry ends consistent
    /// (count, membership and calls agree).
    func testTheFirstObserversArrivalRacingItsRemovalAndASecondAdd() {
        for _ in 0..<1_000 {
            let registry = ObserverRegistry()
            let first = CountingAlpha()
            let second = CountingAlpha()
            let firstAdded = PublishedFlag()
            runOnThreads(3) { thread in
                switch thread {
                case 0:
                    registry.addObserver(first)
                    firstAdded.set()
                case 1:
                    registry.addObserver(second)
                default:
                    while !firstAdded.isSet {
                        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
                    }
                    XCTAssertTrue(registry.removeObserver(first))
                }
            }
            XCTAssertFalse(registry.contains(first))
            XCTAssertTrue(registry.contains(second))
            XCTAssertEqual(registry.observerCount, 1)
            let firstCalls = first.calls.value
            let secondCalls = second.calls.value
            registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
            XCTAssertEqual(first.calls.value, firstCalls, "a removed observer is not called")
            XCTAssertEqual(second.calls.value, secondCalls + 1)
        }
    }
}
