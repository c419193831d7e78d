import Dispatch
import Foundation
import ObserverEngine
import ObserverTestSupport
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// A registry stays small. With one synchronous observer it keeps it, once
/// a send has stored it, as its sole stored observer: no view, no slot list, no
/// identity table, and the first protocol it is called through decided
/// once. A second observer, a second protocol, an isolated conformance or a
/// cast that is not one reference and one witness table moves the registry
/// to its lists. These tests cover the memory it saves, the calls it makes
/// (and does not make), every move to the lists, and senders racing the
/// writers that make and end it; and, in the lists, the one-word table
/// entry and the box without details.
final class RegistrySoleStoredTests: XCTestCase {
    /// Counts its Alpha and Beta calls.
    final class CountingAlphaBeta: AlphaObserver, BetaObserver, Sendable {
        let alphaCalls = HeapAtomicWord<Int>(0)
        let betaCalls = HeapAtomicWord<Int>(0)
        func alpha(_ value: Int) { alphaCalls.wrappingAdd(1, ordering: .relaxed) }
        func beta(_ value: Int) { betaCalls.wrappingAdd(1, ordering: .relaxed) }
    }

    /// What the allocation test's observer writes (no capture in its closures).
    nonisolated(unsafe) static var heapBytesSeenInCall: Int? = nil

    /// An observer that reads the heap's bytes in use while it is called.
    final class HeapReadingObserver: AlphaObserver, Sendable {
        func alpha(_ value: Int) { RegistrySoleStoredTests.heapBytesSeenInCall = HeapBytes.inUse() }
    }

    func testARegistryWithOneObserverStaysSmallOnceASendHasStoredIt() throws {
        final class Observer: AlphaObserver, Sendable {
            func alpha(_ value: Int) {}
        }
        let observer = Observer()
        let bytes = try SourceMemoryTests.bytesEach(100_000) {
            let registry = ObserverRegistry()
            registry.addObserver(observer)
            registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
            return registry
        }
        guard let bytes else { throw XCTSkip("mallinfo2 cannot be read here") }
        // The registry (48), its writer state (112) and the sole stored observer (64).
        XCTAssertLessThanOrEqual(bytes, 256, "an ObserverRegistry with one observer after one withObservers")
        withExtendedLifetime(observer) {}
    }

    func testAnIdentityTableEntryIsOneWordThatIsNeverZero() {
        // A bucket is the entry alone: 8 bytes (16 with a tagged entry),
        // and a zero word marks an empty one.
        XCTAssertEqual(MemoryLayout<RegistryEntry>.size, MemoryLayout<UInt>.size)
        XCTAssertEqual(MemoryLayout<RegistryEntry>.stride, MemoryLayout<UInt>.stride)
        for index: UInt32 in [0, 1, .max] {
            let word = withUnsafeBytes(of: RegistryEntry.pending(index: index)) { $0.load(as: UInt.self) }
            XCTAssertNotEqual(word, 0, "the pending entry of index \(index) is not an empty bucket's word")
        }
    }

    /// The identity table is the only holder of a stored record: its entry's
    /// word must be the record's address as it is, or a leak checker cannot
    /// follow it and reports every record of a live registry as leaked
    /// (LeakSanitizer: `Direct leak of 81 byte(s)` made by
    /// `ObserverRegistry.insert`).
    func testAStoredEntryIsItsRecordsPlainAddress() {
        final class Observer: Sendable {}
        let observer = Observer()
        let record = RegisteredObserver(observer, delivery: .synchronous, generation: 1)
        let entry = RegistryEntry.stored(StoredRegistration(record))
        let word = withUnsafeBytes(of: entry) { $0.load(as: UInt.self) }
        XCTAssertEqual(
            String(word, radix: 16), String(UInt(bitPattern: ObjectIdentifier(record)), radix: 16),
            "a stored entry's word is its record's address, no case bits set")
        withExtendedLifetime((entry, observer)) {}
    }

    /// A protocol view's box for the common observer (synchronous, one
    /// class-bound protocol) is a 56-byte object, a 64-byte glibc chunk:
    /// the cast's first word is the observer's address, which the box holds
    /// once (as its unowned reference); the cast's witness word, its list,
    /// delivery, global-actor queue and wide casts live in details, made
    /// only for the boxes that need them, and the common boxes of one class
    /// share their view's details for that class.
    func testACommonProtocolBoxIsASixtyFourByteChunk() throws {
        #if os(Linux)
            let usableSize = try HeapBlockSize.usableSizeOfObjects()
            let registry = ObserverRegistry()
            let observers = (0..<32).map { AlphaOnly("\($0)") }
            let others = (0..<2).map { AlphaAndBeta("other \($0)") }
            let queued = AlphaAndBeta("queued")
            for observer in observers { registry.addObserver(observer) }
            for observer in others { registry.addObserver(observer) }
            registry.addObserver(queued, delivery: .queue(DispatchQueue(label: "box-size")))
            var boxes: [ConformingObserver<any AlphaObserver>] = []
            let view = registry.view(for: (any AlphaObserver).self)
            view.conforming.forEach { boxes.append($0) }
            XCTAssertEqual(boxes.count, 35)
            let alphaOnlyDetails = boxes[0].details
            let otherDetails = boxes[32].details
            XCTAssertFalse(alphaOnlyDetails === otherDetails, "another class: other details (another witness word)")
            XCTAssertTrue(boxes[33].details === otherDetails, "the same class shares them")
            // glibc may hand out a chunk bigger than the request when what
            // would be left of a free chunk is too small to split off, so
            // one box can read 104 usable bytes whatever its size: the
            // smallest of 32 boxes is the size of the box. A box needing
            // more than 56 bytes reads more in every chunk it gets.
            var commonBoxBytes: [Int] = []
            for box in boxes {
                if box.isSynchronous {
                    XCTAssertTrue(
                        box.details === view.commonDetails(for: box.details.witness),
                        "a common box shares its view's details for its class")
                    commonBoxBytes.append(usableSize(box))
                } else {
                    XCTAssertFalse(
                        box.details === view.commonDetails(for: box.details.witness),
                        "a queued observer's box keeps its delivery in its own details")
                    XCTAssertTrue(box.details.delivery.queue != nil)
                }
            }
            XCTAssertEqual(commonBoxBytes.count, 34)
            XCTAssertLessThanOrEqual(
                commonBoxBytes.min() ?? .max, 56, "a common box's usable bytes (a 64-byte chunk): \(commonBoxBytes)")
            var wide: [ConformingObserver<any AlphaObserver & BetaObserver>] = []
            let wideView = registry.view(for: (any AlphaObserver & BetaObserver).self)
            wideView.conforming.forEach { wide.append($0) }
            XCTAssertEqual(wide.count, 3)
            XCTAssertTrue(wide.first?.hasStoredCast ?? false)
            XCTAssertFalse(
                wide.first.map { $0.details === wideView.commonDetails(for: $0.details.witness) } ?? true,
                "a composition's cast is kept in the box's own details")
            withExtendedLifetime((observers, others, queued)) {}
        #else
            throw XCTSkip("measured with glibc's malloc_usable_size")
        #endif
    }

    /// An observer stored in exactly one protocol view is that view's box
    /// alone: the identity table holds the box (a 64-byte chunk, above),
    /// which knows its generation, delivery, list and handle. A second
    /// view gives it a record again, a 40-byte object (a 48-byte glibc
    /// chunk) that knows both boxes; removing the observer takes it out of
    /// every view.
    ///
    /// Chunk sizes are measured in a fresh process of this bundle that runs
    /// this test alone: glibc hands out a free chunk one size up whole when
    /// what would be left is too small to split off, and the tests before
    /// this one leave many free 64-byte chunks, which 48-byte requests
    /// would take.
    func testAnObserverInOneViewIsItsBoxAloneAndInTwoARecord() throws {
        #if os(Linux)
            // Skips under a sanitizer before a process is started.
            let usableSize = try HeapBlockSize.usableSizeOfObjects()
            let fresh = FreshTestProcess(Self.self)
            if !fresh.isCurrent {
                let outcome = try fresh.run(timeout: 120)
                XCTAssertTrue(
                    outcome.passed,
                    "\(fresh.filter) in a fresh process ended with \(outcome.ending):\n\(outcome.output)")
                XCTAssertTrue(
                    outcome.output.contains("testAnObserverInOneViewIsItsBoxAloneAndInTwoARecord' passed")
                        || outcome.output.contains("testAnObserverInOneViewIsItsBoxAloneAndInTwoARecord' skipped"),
                    "the fresh process ran the test:\n\(outcome.output)")
                return
            }
            let registry = ObserverRegistry()
            let observers = (0..<32).map { AlphaAndBeta("\($0)") }
            for observer in observers { registry.addObserver(observer) }
            registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
            var boxes: [ObjectIdentifier] = []
            registry.view(for: (any AlphaObserver).self).conforming.forEach { boxes.append(ObjectIdentifier($0)) }
            for observer in observers {
                guard case .stored(let stored) = registry.entry(for: observer) else {
                    return XCTFail("\(observer) is not stored")
                }
                XCTAssertNil(stored.record, "in one view: no record")
                XCTAssertTrue(boxes.contains(ObjectIdentifier(stored.object)), "the entry is the view's box")
            }
            // Records made in a row and kept (the view's fill allocates other
            // blocks between its records); the smallest is the record's size.
            var records: [RegisteredObserver] = []
            registry.view(for: (any AlphaObserver).self).conforming.forEach {
                records.append(RegisteredObserver(expanding: $0))
            }
            let recordBytes = records.map(usableSize)
            XCTAssertEqual(records.count, 32)
            XCTAssertLessThanOrEqual(
                recordBytes.min() ?? .max, 40, "a record's usable bytes (a 48-byte chunk): \(recordBytes)")
            registry.withObservers { (observer: BetaObserver) in observer.beta(2) }
            for observer in observers {
                guard case .stored(let stored) = registry.entry(for: observer), stored.record != nil else {
                    return XCTFail("\(observer) has no record in two views")
                }
            }
            // Every observer is in both views; a removal leaves neither.
            XCTAssertTrue(registry.removeObserver(observers[0]))
            registry.withObservers { (observer: AlphaObserver) in observer.alpha(3) }
            registry.withObservers { (observer: BetaObserver) in observer.beta(4) }
            XCTAssertEqual(observers[0].recorded, ["alpha 1", "beta 2"])
            XCTAssertEqual(observers[1].recorded, ["alpha 1", "beta 2", "alpha 3", "beta 4"])
            XCTAssertEqual(registry.view(for: (any AlphaObserver).self).slots.storedCount, 31)
            XCTAssertEqual(registry.view(for: (any BetaObserver).self).slots.storedCount, 31)
            withExtendedLifetime(observers) {}
        #else
            throw XCTSkip("measured with glibc's malloc_usable_size")
        #endif
    }

    /// A record keeps the delivery its observer was added with wherever it
    /// is stored: in no view, in one (its box's details hold it), in
    /// several; each view's box delivers there. Removed, it is stored in
    /// no view.
    func testARecordKeepsItsDeliveryInNoViewOneViewAndSeveral() {
        let registry = ObserverRegistry()
        let queue = DispatchQueue(label: "record-delivery")
        let queued = AlphaAndBeta("queued")
        let synchronous = AlphaAndBeta("synchronous")
        registry.addObserver(synchronous)
        registry.addObserver(queued, delivery: .queue(queue))
        func record(of observer: AnyObject) -> StoredRegistration? {
            guard case .stored(let stored) = registry.entry(for: observer) else { return nil }
            return stored
        }
        // Where the observer was added to be called, as the registry keeps it.
        func delivery(of observer: AnyObject) -> Delivery? {
            guard let stored = record(of: observer) else { return nil }
            return stored.record?.delivery ?? stored.soleBox.details.registeredDelivery
        }
        // A view of a protocol neither conforms to stores both records, in no view.
        registry.withObservers { (_: NeverConformedObserver) in }
        XCTAssertTrue(delivery(of: queued)?.queue === queue, "in no view")
        XCTAssertNil(delivery(of: synchronous)?.queue)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        XCTAssertTrue(delivery(of: queued)?.queue === queue, "in one view")
        registry.withObservers { (observer: BetaObserver) in observer.beta(2) }
        XCTAssertTrue(delivery(of: queued)?.queue === queue, "in two views")
        XCTAssertNil(delivery(of: synchronous)?.queue, "in two views")
        XCTAssertEqual(synchronous.recorded, ["alpha 1", "beta 2"], "called before withObservers returned")
        queue.sync {}
        XCTAssertEqual(queued.recorded, ["alpha 1", "beta 2"], "called on its queue")
        let removed = record(of: queued)?.record
        XCTAssertNotNil(removed, "in two views: a record")
        XCTAssertTrue(registry.removeObserver(queued))
        XCTAssertEqual(removed?.isRemoved, true)
        XCTAssertEqual(removed?.isInView(registry.view(for: (any AlphaObserver).self)), false)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(3) }
        queue.sync {}
        XCTAssertEqual(queued.recorded, ["alpha 1", "beta 2"])
        XCTAssertEqual(synchronous.recorded, ["alpha 1", "beta 2", "alpha 3"])
    }

    func testOneObserverIsCalledWithoutAViewAndItsProtocolIsDecidedOnce() {
        let registry = ObserverRegistry()
        let alpha = AlphaOnly("alpha")
        let token = registry.addObserver(alpha)
        registry.withObserversHere { (observer: AlphaObserver) in observer.alpha(1) }
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(2) }
        XCTAssertEqual(alpha.recorded, ["alpha 1", "alpha 2"])
        XCTAssertNil(registry.existingView(for: (any AlphaObserver).self), "no view was made")
        XCTAssertEqual(registry.storedCount, 1)
        XCTAssertEqual(registry.entryCount, 1)
        XCTAssertTrue(registry.contains(alpha))
        XCTAssertFalse(registry.addObserver(alpha).isActive, "a repeated add is a no-op")
        XCTAssertTrue(token.isActive)
        XCTAssertEqual(registry.observerCount, 1)
        XCTAssertTrue(token.cancel())
        XCTAssertFalse(token.isActive)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(3) }
        XCTAssertEqual(alpha.recorded, ["alpha 1", "alpha 2"])
        XCTAssertEqual(registry.observerCount, 0)
        // Added again, it is stored again (a new registration, a new token).
        let again = registry.addObserver(alpha)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(4) }
        XCTAssertEqual(alpha.recorded, ["alpha 1", "alpha 2", "alpha 4"])
        XCTAssertFalse(token.cancel(), "the old token does not end the new registration")
        XCTAssertTrue(again.isActive)
        XCTAssertTrue(registry.removeObserver(alpha))
        XCTAssertFalse(again.isActive)
    }

    /// Bytes allocated and alive while the observer runs, and left behind,
    /// over 1 000 calls after the first: both 0, with one observer (sole
    /// stored) and with two (the lists). glibc's counts are process-wide, so
    /// the measurement runs in a fresh process of this bundle that runs this
    /// test alone: no thread an earlier test left can allocate or free
    /// during it, and its small heap keeps each `mallinfo2()` read short.
    /// That process runs with glibc's per-thread cache off: `mallinfo2()`
    /// counts a block in that cache as in use, so a block freed and taken
    /// again in every call would not show. This process asserts that the
    /// fresh one ran, measured both registries and passed.
    func testLaterCallsAllocateNothing() throws {
        guard HeapBytes.inUse() != nil else { throw XCTSkip("mallinfo2 cannot be read here") }
        let fresh = FreshTestProcess(Self.self)
        if fresh.isCurrent {
            try measureLaterCallsForEachRegistryShape()
            return
        }
        let noCache = "glibc.malloc.tcache_count=0"
        let tunables = ProcessInfo.processInfo.environment["GLIBC_TUNABLES"].map { "\($0):\(noCache)" } ?? noCache
        let outcome = try fresh.run(timeout: 120, environment: ["GLIBC_TUNABLES": tunables])
        XCTAssertTrue(
            outcome.passed, "\(fresh.filter) in a fresh process ended with \(outcome.ending):\n\(outcome.output)")
        for observers in [1, 2] {
            let report = outcome.output.split(separator: "\n").first { $0.hasPrefix(Self.heapReportPrefix(observers)) }
            XCTAssertNotNil(
                report, "the fresh process measured no registry with \(observers) observers:\n\(outcome.output)")
            if let report { print("fresh process:", report) }
        }
    }

    /// How the fresh process's line about a registry with `observers` starts.
    static func heapReportPrefix(_ observers: Int) -> String {
        let shape = observers == 1 ? "1 observer, sole stored" : "\(observers) observers, in the lists"
        return "heap over 1 000 later calls, \(shape):"
    }

    /// The measurement, in the fresh process. Its own allocator work (the
    /// first calls, reclamation) could still land in one attempt, so up to
    /// five are taken; an allocation made by every call shows in each.
    private func measureLaterCallsForEachRegistryShape() throws {
        // The reading sees a block freed and taken again (the cache is off).
        UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16).deallocate()
        let beforeBlock = HeapBytes.inUse()!
        let block = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        let withBlock = HeapBytes.inUse()!
        block.deallocate()
        XCTAssertGreaterThan(withBlock - beforeBlock, 0, "bytes in use seen while a 64-byte block taken again is held")
        // Sole stored, then (second registry) the lists.
        for observers in [1, 2] {
            let registry = ObserverRegistry()
            let reading = HeapReadingObserver()
            let others = (1..<observers).map { _ in HeapReadingObserver() }
            registry.addObserver(reading)
            for other in others { registry.addObserver(other) }
            // The first calls decide the protocol (and may allocate).
            for _ in 0..<3 { registry.withObservers { (observer: AlphaObserver) in observer.alpha(0) } }
            // Each attempt's calls with bytes allocated during them, and bytes left.
            var attempts: [(callsWithBytesAllocated: Int, bytesLeft: Int)] = []
            while attempts.count < 5 {
                var seen: [Int] = []
                seen.reserveCapacity(1_000)
                try ObserverCore.reclaimNow()
                let before = HeapBytes.inUse()!
                for _ in 0..<1_000 {
                    Self.heapBytesSeenInCall = nil
                    let start = HeapBytes.inUse()!
                    registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
                    seen.append((Self.heapBytesSeenInCall ?? -1) - start)
                }
                try ObserverCore.reclaimNow()
                // Read before counting: the count's first run may allocate runtime caches for good.
                let bytesLeft = HeapBytes.inUse()! - before
                attempts.append((seen.filter { $0 != 0 }.count, bytesLeft))
                if attempts.last! == (0, 0) { break }
            }
            let measured = attempts.last!
            print(
                Self.heapReportPrefix(observers),
                "\(measured.callsWithBytesAllocated) calls with bytes allocated during them,",
                "\(measured.bytesLeft) bytes left (attempts: \(attempts.map { "\($0.0) calls, \($0.1) bytes" }))")
            XCTAssertEqual(
                measured.callsWithBytesAllocated, 0, "calls with bytes allocated during them (\(observers) observers)")
            XCTAssertEqual(measured.bytesLeft, 0, "bytes left by 1 000 calls (\(observers) observers)")
            withExtendedLifetime((reading, others)) {}
        }
    }

    func testAnObserverThatDoesNotConformIsNotCalledAndMakesNoView() {
        let registry = ObserverRegistry()
        let beta = BetaOnly("beta")
        registry.addObserver(beta)
        for _ in 0..<2 {
            registry.withObservers { (_: AlphaObserver) in XCTFail("a non-conforming observer was called") }
        }
        XCTAssertNil(registry.existingView(for: (any AlphaObserver).self))
        XCTAssertEqual(registry.storedCount, 1)
        XCTAssertEqual(registry.observerCount, 1)
    }

    func testASecondProtocolMovesTheObserverToTheListsWithItsToken() {
        let registry = ObserverRegistry()
        let both = AlphaAndBeta("both")
        let token = registry.addObserver(both)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        registry.withObservers { (observer: BetaObserver) in observer.beta(2) }
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(3) }
        registry.withObservers { (observer: LooseObserver) in observer.loose(4) }
        registry.withObservers { (observer: any AlphaObserver & BetaObserver) in observer.alpha(5) }
        registry.withObservers { (observer: AlphaAndBeta) in observer.beta(6) }
        XCTAssertEqual(both.recorded, ["alpha 1", "beta 2", "alpha 3", "loose 4", "alpha 5", "beta 6"])
        XCTAssertNotNil(registry.existingView(for: (any AlphaObserver).self), "the lists took over")
        XCTAssertEqual(registry.storedCount, 1)
        XCTAssertTrue(token.isActive)
        XCTAssertTrue(token.cancel(), "the token still ends the registration")
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(7) }
        XCTAssertEqual(both.recorded.count, 6)
    }

    func testCastsThatAreNotOneReferenceAndOneWitnessTableGoToTheLists() {
        for index in 0..<3 {
            let registry = ObserverRegistry()
            let both = AlphaAndBeta("both")
            registry.addObserver(both)
            switch index {
            case 0: registry.withObservers { (observer: any AlphaObserver & BetaObserver) in observer.alpha(1) }
            case 1: registry.withObservers { (observer: LooseObserver) in observer.loose(1) }
            default: registry.withObservers { (observer: AlphaAndBeta) in observer.beta(1) }
            }
            XCTAssertEqual(both.callCount, 1)
            registry.withObservers { (observer: AlphaObserver) in observer.alpha(2) }
            XCTAssertEqual(both.callCount, 2)
        }
    }

    func testASecondObserverMovesTheFirstToTheListsInOrder() {
        let registry = ObserverRegistry()
        let first = AlphaOnly("first")
        let second = AlphaOnly("second")
        let order = SharedVariable<[String]>([])
        let firstToken = registry.addObserver(first)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        registry.addObserver(second)
        XCTAssertEqual(registry.entryCount, 2)
        registry.withObservers { (observer: AlphaObserver) in
            order.update { $0.append((observer as! AlphaOnly).name) }
        }
        XCTAssertEqual(order.value, ["first", "second"], "the first registered is called first")
        XCTAssertTrue(firstToken.cancel())
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(2) }
        XCTAssertEqual(first.recorded, ["alpha 1"])
        XCTAssertEqual(second.recorded, ["alpha 2"])
    }

    func testAnObserverMayRemoveItselfOrAddAnotherWhileCalled() {
        final class SelfRemoving: AlphaObserver, @unchecked Sendable {
            weak var registry: ObserverRegistry?
            var calls = 0
            func alpha(_ value: Int) {
                calls += 1
                registry?.removeObserver(self)
            }
        }
        let registry = ObserverRegistry()
        let removing = SelfRemoving()
        removing.registry = registry
        registry.addObserver(removing)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(2) }
        XCTAssertEqual(removing.calls, 1)
        XCTAssertEqual(registry.observerCount, 0)

        final class Adding: AlphaObserver, @unchecked Sendable {
            weak var registry: ObserverRegistry?
            let added = AlphaOnly("added")
            func alpha(_ value: Int) { registry?.addObserver(added) }
        }
        let adding = Adding()
        adding.registry = registry
        registry.addObserver(adding)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(3) }
        XCTAssertEqual(adding.added.recorded, [], "an observer added during a call is not called by it")
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(4) }
        XCTAssertEqual(adding.added.recorded, ["alpha 4"])
    }

    func testADeallocatedSoleObserverIsNeverCalledAndIsDropped() {
        let registry = ObserverRegistry()
        var alpha: AlphaOnly? = AlphaOnly("alpha")
        weak let gone = alpha
        let token = registry.addObserver(alpha!)
        registry.withObservers { (observer: AlphaObserver) in observer.alpha(1) }
        alpha = nil
        XCTAssertNil(gone)
        registry.withObservers { (_: AlphaObserver) in XCTFail("a deallocated observer was called") }
        XCTAssertFalse(token.isActive)
        XCTAssertEqual(registry.entryCount, 1, "not swept yet")
        XCTAssertEqual(registry.observerCount, 0, "counting swept it")
        XCTAssertEqual(registry.entryCount, 0)
        XCTAssertFalse(token.cancel())
    }

    func testAnObserverIsolatedToTheMainActorGoesToTheLists() {
        let registry = ObserverRegistry()
        let screen = MainActor.assumeIsolated { DownloadScreen() }
        registry.addObserver(screen)
        registry.withObservers { (observer: DownloadObserving) in observer.downloaded(1) }
        let drained = expectation(description: "main queue drained")
        DispatchQueue.main.async { drained.fulfill() }
        waitUntilFulfilled([drained], timeout: 30)
        XCTAssertNotNil(
            registry.existingView(for: (any DownloadObserving).self), "an isolated conformance needs the lists")
        XCTAssertEqual(MainActor.assumeIsolated { screen.shown }, [1])
        XCTAssertEqual(MainActor.assumeIsolated { screen.calledOffTheMainActor }, 0)
    }

    /// Two threads make the first calls through one protocol at once: the
    /// one that waits for the lock finds the protocol decided and keeps the
    /// sole stored form. Every call reaches the observer exactly once.
    func testTwoFirstCallsThroughOneProtocolKeepTheSoleStoredForm() {
        for _ in 0..<200 {
            let registry = ObserverRegistry()
            let observer = CountingAlphaBeta()
            registry.addObserver(observer)
            let calls = 20
            runOnThreads(2) { _ in
                for value in 0..<calls {
                    registry.withObservers { (observer: AlphaObserver) in observer.alpha(value) }
                }
            }
            XCTAssertEqual(observer.alphaCalls.load(ordering: .relaxed), 2 * calls)
            XCTAssertNil(registry.existingView(for: (any AlphaObserver).self), "no move to the lists")
        }
    }

    /// Two threads call through two protocols while the observer stays
    /// registered: the first decides one protocol, the other moves the
    /// registry to its lists meanwhile. Every call reaches it exactly once.
    func testTwoProtocolsRacingTheMoveToTheListsLoseNoCall() {
        for _ in 0..<200 {
            let registry = ObserverRegistry()
            let observer = CountingAlphaBeta()
            registry.addObserver(observer)
            let calls = 50
            runOnThreads(2) { thread in
                for value in 0..<calls {
                    if thread == 0 {
                        registry.withObservers { (observer: AlphaObserver) in observer.alpha(value) }
                    } else {
                        registry.withObservers { (observer: BetaObserver) in observer.beta(value) }
                    }
                }
            }
            XCTAssertEqual(observer.alphaCalls.load(ordering: .relaxed), calls)
            XCTAssertEqual(observer.betaCalls.load(ordering: .relaxed), calls)
        }
    }

    /// Senders call while another thread adds a short-lived observer,
    /// stores it with a send of its own, and removes it (or lets it die),
    /// over and over: the registry moves in and out of the sole stored form
    /// under the senders. No observer is called after its deinit started,
    /// and the churning thread's own send reaches the observer it added.
    func testSendersRacingTheSoleStoredObserverComingAndGoing() {
        let ledger = LivenessLedger()
        let registry = ObserverRegistry()
        let stop = HeapAtomicWord<Bool>(false)
        let missed = HeapAtomicWord<Int>(0)
        let rounds = 2_000
        let deadline = Date().addingTimeInterval(60)
        runOnThreads(3) { thread in
            if thread == 0 {
                for round in 0..<rounds where Date() < deadline {
                    // Odd rounds: an observer that stays registered through
                    // the churning thread's send, which must reach it. Even
                    // rounds: one that is removed, or dies while registered.
                    if round % 2 == 1 {
                        let counter = CountingAlphaBeta()
                        registry.addObserver(counter)
                        registry.withObservers { (observer: AlphaObserver) in observer.alpha(round) }
                        if counter.alphaCalls.load(ordering: .relaxed) == 0 {
                            missed.wrappingAdd(1, ordering: .relaxed)
                        }
                        registry.removeObserver(counter)
                    } else {
                        let transient = TransientAlpha(ledger)
                        registry.addObserver(transient)
                        registry.withObservers { (observer: AlphaObserver) in observer.alpha(round) }
                        if round % 4 == 0 { registry.removeObserver(transient) }
                        // Otherwise `transient` dies here, registered: a dead sole observer.
                    }
                }
                stop.store(true, ordering: .releasing)
            } else {
                while !stop.load(ordering: .acquiring) {
                    registry.withObservers { (observer: AlphaObserver) in observer.alpha(thread) }
                }
            }
        }
        XCTAssertLessThan(Date(), deadline, "the churn finished in time")
        XCTAssertEqual(ledger.callsOnDead.load(ordering: .relaxed), 0, "calls to observers whose deinit had started")
        XCTAssertEqual(missed.load(ordering: .relaxed), 0, "sends that missed an observer registered before them")
        XCTAssertEqual(registry.observerCount, 0)
    }
}

/// A protocol no test observer conforms to.
private protocol NeverConformedObserver: AnyObject {}
