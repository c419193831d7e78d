import CObserverCore
import Foundation
@_spi(EngineDiagnostics) import ObserverEngine
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

#if canImport(Glibc)
    import Glibc
#endif

/// Dead weak targets on a quiet source: a source that is subscribed to and
/// cancelled from, but never sent to nor counted, must not keep what its
/// deallocated targets leave behind (each subscription's unowned reference
/// keeps its target's allocation until the subscription's box is
/// released). The subscribes and cancels that happen anyway sweep them, a
/// few slots at a time.
final class DeadTargetSweepTests: XCTestCase {
    /// A target of 512 bytes beyond its object header.
    final class Target: Sendable {
        struct Block: Sendable {
            var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        }
        let a = Block(), b = Block(), c = Block(), d = Block(), e = Block(), f = Block(), g = Block(), h = Block()
    }

    protocol Listening: AnyObject {}
    /// No target conforms: a `withObservers` with it stores pending
    /// observers and calls (and so probes) none.
    protocol Unheard: AnyObject {}

    final class ListeningTarget: Listening, Sendable {
        let payload = Target()
    }

    static let targets = 100_000
    static let retainedLimit = 8 << 20

    /// 100 000 short-lived targets, each subscribed to
    /// an `Event`, a `KeyedEvent` (a key each), an `ObservableValue`
    /// binding and an `ObserverRegistry`, none of them sent to or counted.
    /// What the dead targets retain stays under 8 MiB. Before the sweep,
    /// all of it stayed: ~100 MiB by mallinfo2, and 300 000 boxes (their
    /// handlers' captures) alive.
    func testQuietSourcesDoNotKeepDeadTargets() throws {
        let event = Event<Int>()
        let keyed = KeyedEvent<Int, Int>()
        let value = ObservableValue(0)
        let registry = ObserverRegistry()
        try ObserverCore.reclaimNow()
        let heapBefore = HeapBytes.inUse()
        let liveBefore = ReliabilityLiveInstances.current

        for key in 0..<Self.targets {
            let target = Target()
            let capture = ReliabilityTrackedCapture()
            event.subscribe(target) { _, _ in capture.checkIntact() }
            keyed.subscribe(target, key: key) { _, _ in capture.checkIntact() }
            value.subscribe(target) { _, _ in capture.checkIntact() }
            registry.addObserver(target)
        }

        // No send, no count, no reclaimNow: what is held now is what a quiet
        // source keeps.
        let liveBoxes = ReliabilityLiveInstances.current - liveBefore
        let storedEvent = event.slots.storedCount
        let storedValue = value.observers.slots.storedCount
        let keys = keyed.keyCount
        let entries = registry.entryCount
        print(
            "dead targets: \(liveBoxes) captures alive, \(storedEvent) + \(storedValue) slots, \(keys) keys, "
                + "\(entries) registry entries")
        if let heapBefore, let heapAfter = HeapBytes.inUse() {
            let retained = heapAfter - heapBefore
            print("dead targets: \(retained) bytes retained (mallinfo2)")
            XCTAssertLessThan(
                retained, Self.retainedLimit,
                "heap retained after \(Self.targets) dead targets: \(retained) bytes (mallinfo2)")
        }
        // Every capture is held by its three boxes: one left means a box left.
        XCTAssertLessThan(liveBoxes, 4_096, "captures of dead targets' handlers still alive")
        XCTAssertLessThan(storedEvent, 64, "Event slots of dead targets")
        XCTAssertLessThan(storedValue, 64, "binding slots of dead targets")
        XCTAssertLessThan(keys, 256, "keys whose only subscriber's target died")
        XCTAssertLessThan(entries, 64, "registry entries of dead observers")
        XCTAssertEqual(ReliabilityLiveInstances.poisoned, 0)
    }

    /// The bound the sweep gives with live subscriptions beside the dead:
    /// each subscribe examines 4 slots, so a dead target's slot is found
    /// within a quarter round of the list, and dead slots stay under a third
    /// of the live ones (plus a few).
    func testDeadSlotsStayUnderAThirdOfTheLiveOnes() {
        let event = Event<Int>()
        let live = (0..<3_000).map { _ in Target() }
        for target in live { event.subscribe(target) { _, _ in } }
        var highest = 0
        for cycle in 0..<30_000 {
            event.subscribe(Target()) { _, _ in }
            if cycle % 97 == 0 { highest = max(highest, event.slots.storedCount - live.count) }
        }
        highest = max(highest, event.slots.storedCount - live.count)
        XCTAssertLessThanOrEqual(highest, live.count / 3 + 16, "dead slots beside \(live.count) live ones")
        withExtendedLifetime(live) {}
    }

    /// Cancels sweep too (a source whose subscriptions come and go), and a
    /// list that never held a target's box pays nothing for it: its cursor
    /// never moves.
    func testCancelsSweepAndClosureOnlyListsSkipTheSweep() {
        let event = Event<Int>()
        let token = event.subscribe { _ in }
        for _ in 0..<100 { event.subscribe { _ in }.cancel() }
        XCTAssertFalse(event.slots.holdsTargets.load(ordering: .relaxed))
        XCTAssertEqual(event.slots.sweepCursor.load(ordering: .relaxed), 0, "no step taken")

        var target: Target? = Target()
        event.subscribe(target!) { _, _ in }
        target = nil
        XCTAssertEqual(event.slots.storedCount, 2, "nothing has noticed the death yet")
        event.subscribe { _ in }.cancel()
        XCTAssertEqual(event.slots.storedCount, 1, "one subscribe and cancel found the dead slot")
        token.cancel()
    }

    /// An `ObserverRegistry` alone, never sent to nor counted: 100 000
    /// short-lived 512-byte targets, added one at a time while pending (never
    /// stored), and 100 000 more stored while alive (by a `withObservers`
    /// that calls none of them, so no send ever finds one dead) and
    /// deallocated afterwards, in batches of 1 000 beside one live observer.
    /// What the dead targets retain stays under 8 MiB: by mallinfo2 where it
    /// works, and everywhere by the entries held (each keeps its target's
    /// allocation of more than 512 bytes). Adds that do not grow the table
    /// (a steady add + remove) are not what sweeps: the sweep runs when an
    /// add would grow it.
    func testRegistryKeepsWhatDeadTargetsRetainUnder8MiBWithoutSendOrCount() throws {
        let registry = ObserverRegistry()
        let kept = ListeningTarget()
        registry.addObserver(kept)
        registry.withObservers { (_: Unheard) in }
        try ObserverCore.reclaimNow()
        let heapBefore = HeapBytes.inUse()
        let entryLimit = Self.retainedLimit / 512

        var highestEntries = 0
        for cycle in 0..<Self.targets {
            registry.addObserver(Target())
            if cycle % 97 == 0 { highestEntries = max(highestEntries, registry.entryCount) }
        }
        let pendingEntries = registry.entryCount
        for _ in 0..<(Self.targets / 1_000) {
            let batch = (0..<1_000).map { _ in Target() }
            for target in batch {
                registry.addObserver(target)
                highestEntries = max(highestEntries, registry.entryCount)
            }
            registry.withObservers { (_: Unheard) in }
        }
        let storedEntries = registry.entryCount
        print(
            "registry dead targets: \(pendingEntries) entries after the pending ones, \(storedEntries) after the "
                + "stored ones, at most \(highestEntries) (limit \(entryLimit))")
        if let heapBefore, let heapAfter = HeapBytes.inUse() {
            let retained = heapAfter - heapBefore
            print("registry dead targets: \(retained) bytes retained (mallinfo2)")
            XCTAssertLessThan(retained, Self.retainedLimit, "heap retained by dead observers (mallinfo2)")
        }
        XCTAssertLessThan(highestEntries, entryLimit, "entries of dead observers hold over 8 MiB")
        XCTAssertTrue(registry.contains(kept))
        XCTAssertEqual(registry.observerCount, 1, "only the live observer is left")
    }

    /// The sweep's bound on the table: it grows only while more than a
    /// quarter of it is alive, so with L observers alive the entries held,
    /// dead ones included, stay under 4 L (or 8); a steady add + remove
    /// leaves the dead entries alone until the next growth would come.
    func testRegistryEntriesStayUnderFourTimesTheLiveObservers() {
        let registry = ObserverRegistry()
        let live = (0..<300).map { _ in ListeningTarget() }
        for target in live { registry.addObserver(target) }
        var highest = 0
        for cycle in 0..<30_000 {
            registry.addObserver(ListeningTarget())
            if cycle % 7 == 0 {
                let passing = ListeningTarget()
                registry.addObserver(passing)
                registry.removeObserver(passing)
            }
            highest = max(highest, registry.entryCount)
        }
        XCTAssertLessThan(highest, 4 * live.count, "entries beside \(live.count) live observers")
        XCTAssertEqual(registry.observerCount, live.count)
    }
}

/// The heap's bytes in use by glibc's `mallinfo2()` (`uordblks + hblkhd`),
/// found with `dlsym` (Swift's Glibc module does not import <malloc.h>).
/// nil elsewhere, and under a sanitizer, whose allocator it does not see.
enum HeapBytes {
    static func inUse() -> Int? {
        #if os(Linux) && arch(x86_64)
            if ReliabilityEnvironment.isSanitized { return nil }
            typealias MallInfo2 = @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallinfo2") else { return nil }
            let mallinfo2 = unsafeBitCast(symbol, to: MallInfo2.self)
            // struct mallinfo2: ten size_t fields; uordblks is the 8th, hblkhd the 5th.
            // On the stack: reading the heap allocates nothing from it.
            return withUnsafeTemporaryAllocation(of: Int.self, capacity: 10) { fields in
                fields.initialize(repeating: 0)
                _ = mallinfo2(UnsafeMutableRawPointer(fields.baseAddress!))
                return fields[7] + fields[4]
            }
        #else
            return nil
        #endif
    }
}

/// `oc_keymap_visit_some`, the keyed sweep's walk: continued call after
/// call it visits every key, keeps its cursor inside the table, and rejects
/// NULL arguments.
final class KeymapIncrementalVisitTests: XCTestCase {
    private final class Visited {
        var keys = Set<Int>()
    }

    func testContinuedWalkVisitsEveryKeyAndWraps() {
        let keyed = KeyedEvent<Int, Int>()
        let tokens = (0..<40).map { key in keyed.subscribe(key: key) { _ in } }
        let map = keyed.lists.pointer
        let visited = Visited()
        var cursor = 0
        // A table holding 40 keys (at most half full) has at most 128 slots:
        // 16 calls of 16 slots are two rounds of it.
        for _ in 0..<16 {
            let status = withExtendedLifetime(visited) {
                oc_keymap_visit_some(
                    map, &cursor, 16,
                    { entry, argument in
                        let visited = Unmanaged<Visited>.fromOpaque(argument!).takeUnretainedValue()
                        let key = Unmanaged<AnyKeyBox>.fromOpaque(entry.pointee.key_context).takeUnretainedValue()
                        visited.keys.insert(key.anyKey.base as! Int)
                        return true
                    }, Unmanaged.passUnretained(visited).toOpaque())
            }
            XCTAssertEqual(status, OC_OK)
            XCTAssertLessThan(cursor, 128)
        }
        XCTAssertEqual(visited.keys, Set(0..<40))
        XCTAssertEqual(oc_keymap_visit_some(nil, &cursor, 16, { _, _ in true }, nil), OC_EINVAL)
        XCTAssertEqual(oc_keymap_visit_some(map, nil, 16, { _, _ in true }, nil), OC_EINVAL)
        XCTAssertEqual(oc_keymap_visit_some(map, &cursor, 16, nil, nil), OC_EINVAL)
        for token in tokens { token.cancel() }
    }
}
