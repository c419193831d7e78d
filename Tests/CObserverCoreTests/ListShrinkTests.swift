import CObserverCore
import CObserverCore.Testing
import XCTest

/// A list shrinks by compacting its contexts into the lowest slots of a
/// smaller array (oc_list.h, OC_LIST_MIN_SLOTS): the growth and shrink
/// boundaries, amortized churn at them, handles of moved contexts, stale and
/// foreign handles, and the memory a list keeps after mass removal.
final class ListShrinkTests: XCTestCase {
    private func makeList() throws -> OpaquePointer {
        // Releases retired by earlier tests arrive with the next poll: drain them first.
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        _ = takeReleases()
        return try XCTUnwrap(oc_list_create(coreTestRelease))
    }

    private func add(_ list: OpaquePointer, _ value: Int, file: StaticString = #filePath, line: UInt = #line)
        -> oc_handle_t
    {
        var handle = noHandle
        XCTAssertEqual(oc_list_add(list, fakeContext(value), &handle), OC_OK, file: file, line: line)
        return handle
    }

    /// The contexts a send starting now calls, in slot order.
    private func visibleContexts(_ list: OpaquePointer) -> [Int] {
        let reader = oc_read_begin()
        defer { oc_read_end(reader) }
        let view = oc_list_view(list)
        return (0..<view.count).compactMap { index in
            oc_view_context(view, index).map { Int(bitPattern: $0) }
        }
    }

    /// Slots a send starting now scans.
    private func scannedSlots(_ list: OpaquePointer) -> UInt32 {
        let reader = oc_read_begin()
        defer { oc_read_end(reader) }
        return oc_list_view(list).count
    }

    func testTheLastSurvivorOfAMassRemovalIsCompactedAndItsHandleStillWorks() throws {
        let list = try makeList()
        defer { oc_list_destroy(list) }
        let handles = (1...100_000).map { add(list, $0) }
        let grownBytes = oc_list_bytes_held(list)
        XCTAssertGreaterThan(grownBytes, 100_000 * 16)
        // Everything but the last (the highest slot) goes, first to last.
        for handle in handles.dropLast() {
            XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
        }
        XCTAssertEqual(visibleContexts(list), [100_000])
        XCTAssertLessThanOrEqual(oc_list_capacity(list), 2, "compacted into an array twice the count")
        XCTAssertEqual(scannedSlots(list), 1, "a send scans the one slot in use")
        XCTAssertLessThanOrEqual(oc_list_bytes_held(list), 64 * 1024)
        XCTAssertLessThanOrEqual(oc_list_bytes_held(list), 512, "the list, a 2-slot array, no table left over")

        let survivor = try XCTUnwrap(handles.last)
        XCTAssertEqual(survivor.index, 99_999, "the handle still carries the index it was added at")
        XCTAssertTrue(oc_list_contains(list, survivor))
        XCTAssertEqual(oc_list_remove(list, handles[0]), OC_ENOENT, "a stale handle removes nothing")
        XCTAssertEqual(visibleContexts(list), [100_000])
        XCTAssertEqual(oc_list_remove(list, survivor), OC_OK, "the moved survivor's handle removes it")
        XCTAssertEqual(oc_list_remove(list, survivor), OC_ENOENT)
        XCTAssertEqual(visibleContexts(list), [])
        XCTAssertTrue(oc_list_is_empty(list))
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), Array(1...100_000), "each released exactly once")
    }

    func testMovedContextsKeepTheirOrderAndEachHandleRemovesItsOwnContextOnly() throws {
        let list = try makeList()
        defer { oc_list_destroy(list) }
        let handles = (1...256).map { add(list, $0) }
        let kept = [4, 101, 150, 201, 256]
        for (offset, handle) in handles.enumerated() where !kept.contains(offset + 1) {
            XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
        }
        XCTAssertEqual(visibleContexts(list), kept, "compaction keeps the slot order")
        XCTAssertLessThanOrEqual(oc_list_capacity(list), 16)
        XCTAssertLessThanOrEqual(Int(scannedSlots(list)), 2 * kept.count, "the survivors were moved down")

        // A context added now takes the lowest free slot, which a moved context's
        // original index may name: that handle still finds its own context.
        let added = add(list, 1000)
        XCTAssertLessThan(Int(added.index), 2 * kept.count)
        var handleOf = Dictionary(uniqueKeysWithValues: kept.map { ($0, handles[$0 - 1]) })
        handleOf[1000] = added
        var remaining = visibleContexts(list)
        XCTAssertEqual(remaining.sorted(), kept + [1000])
        // Remove in an order unrelated to either index: middle, first, last, ...
        for position in [2, 0, 3, 0, 1, 0] {
            let value = remaining.remove(at: position)
            let handle = try XCTUnwrap(handleOf.removeValue(forKey: value))
            XCTAssertEqual(oc_list_remove(list, handle), OC_OK, "removing \(value)")
            XCTAssertEqual(oc_list_remove(list, handle), OC_ENOENT, "\(value) removed twice")
            XCTAssertEqual(visibleContexts(list), remaining, "only \(value) went")
            for (other, otherHandle) in handleOf {
                XCTAssertTrue(oc_list_contains(list, otherHandle), "\(other) still named by its handle")
            }
        }
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(takeReleases(), Array(1...256) + [1000])
        XCTAssertLessThanOrEqual(oc_list_bytes_held(list), 512, "the moved table goes with its last entry")
    }

    func testStaleAndForeignHandlesAreNoOpsAfterCompaction() throws {
        let list = try makeList()
        let other = try makeList()
        defer {
            oc_list_destroy(list)
            oc_list_destroy(other)
        }
        let handles = (1...64).map { add(list, $0) }
        let foreign = (1...64).map { add(other, 1000 + $0) }
        // Survivors 61...64 move to slots 0...3, where 1...4 were.
        for handle in handles.prefix(60) {
            XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
        }
        XCTAssertEqual(visibleContexts(list), [61, 62, 63, 64])
        for handle in handles.prefix(60) {
            XCTAssertEqual(oc_list_remove(list, handle), OC_ENOENT, "stale: its index holds a moved context now")
            XCTAssertFalse(oc_list_contains(list, handle))
        }
        for handle in foreign {
            XCTAssertEqual(oc_list_remove(list, handle), OC_ENOENT, "foreign: issued by another list")
        }
        XCTAssertEqual(
            oc_list_remove(list, forgedHandle(sequence: handles[60].sequence &+ 1_000_000, index: 0)), OC_ENOENT)
        XCTAssertEqual(oc_list_remove(list, forgedHandle(sequence: UInt64.max, index: 0)), OC_ENOENT)
        XCTAssertEqual(oc_list_try_remove(list, handles[0]), OC_ENOENT)
        XCTAssertEqual(visibleContexts(list), [61, 62, 63, 64], "nothing removed by them")
        XCTAssertEqual(oc_list_count(other), 64)
        for handle in handles.suffix(4) {
            XCTAssertEqual(oc_list_try_remove(list, handle), OC_OK)
        }
        XCTAssertEqual(oc_list_count(list), 0)
    }

    func testGrowthAndShrinkBoundariesInBothDirections() throws {
        let list = try makeList()
        defer { oc_list_destroy(list) }
        var handles: [oc_handle_t] = []
        let start = oc_testing_list_resizes()
        for value in 1...64 { handles.append(add(list, value)) }
        XCTAssertEqual(oc_list_capacity(list), 64, "full: every slot in use")
        XCTAssertEqual(oc_testing_list_resizes() - start, 6, "1 -> 2 -> 4 -> ... -> 64")
        handles.append(add(list, 65))
        XCTAssertEqual(oc_list_capacity(list), 128, "one past full doubles")
        // Down to a quarter: 33 in use keeps 128 slots, 32 compacts to 64.
        while oc_list_count(list) > 33 {
            XCTAssertEqual(oc_list_remove(list, handles.removeFirst()), OC_OK)
        }
        XCTAssertEqual(oc_list_capacity(list), 128)
        let beforeShrink = oc_testing_list_resizes()
        XCTAssertEqual(oc_list_remove(list, handles.removeFirst()), OC_OK)
        XCTAssertEqual(oc_list_capacity(list), 64, "a quarter full: compacted into an array half full")
        XCTAssertEqual(oc_testing_list_resizes() - beforeShrink, 1)
        XCTAssertEqual(visibleContexts(list), Array(34...65))
        XCTAssertEqual(scannedSlots(list), 32)
        // Back up: 64 fit, the 65th doubles again.
        var value = 66
        while oc_list_count(list) < 64 {
            handles.append(add(list, value))
            value += 1
        }
        XCTAssertEqual(oc_list_capacity(list), 64)
        handles.append(add(list, value))
        XCTAssertEqual(oc_list_capacity(list), 128)
        // And all the way down to the minimum.
        for handle in handles { XCTAssertEqual(oc_list_remove(list, handle), OC_OK) }
        XCTAssertEqual(oc_list_capacity(list), 1, "OC_LIST_MIN_SLOTS")
        XCTAssertTrue(oc_list_is_empty(list))
    }

    func testChurnAtEitherBoundaryDoesNotResizeOnEachChange() throws {
        let list = try makeList()
        defer { oc_list_destroy(list) }
        var handles = (1...64).map { add(list, $0) }
        // At the growth boundary: add one past full, remove it, 10 000 times.
        var start = oc_testing_list_resizes()
        for round in 0..<10_000 {
            let handle = add(list, 1000 + round)
            XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
        }
        XCTAssertEqual(oc_testing_list_resizes() - start, 1, "grown once, never shrunk back")
        XCTAssertEqual(oc_list_capacity(list), 128)
        // At the shrink boundary: 33 <-> 32 in use of 128 slots, then of 64.
        while oc_list_count(list) > 33 {
            XCTAssertEqual(oc_list_remove(list, handles.removeLast()), OC_OK)
        }
        XCTAssertEqual(oc_list_capacity(list), 128)
        start = oc_testing_list_resizes()
        for round in 0..<10_000 {
            XCTAssertEqual(oc_list_remove(list, handles.removeLast()), OC_OK)
            handles.append(add(list, 20_000 + round))
        }
        XCTAssertEqual(oc_testing_list_resizes() - start, 1, "shrunk once, never grown back")
        XCTAssertEqual(oc_list_capacity(list), 64)

        // A random walk of the count: every resize of an array of C slots
        // follows at least C / 4 changes, so the slots copied stay within a
        // few per change.
        var generator = SplitMix(seed: 28)
        start = oc_testing_list_resizes()
        var changes = 0
        var copied = 0
        var capacity = oc_list_capacity(list)
        for _ in 0..<200_000 {
            if handles.isEmpty || (generator.next() % 100 < 51 && handles.count < 5000) {
                handles.append(add(list, 100_000 + changes))
            } else {
                handles.swapAt(Int(generator.next() % UInt64(handles.count)), handles.count - 1)
                XCTAssertEqual(oc_list_remove(list, handles.removeLast()), OC_OK)
            }
            changes += 1
            let now = oc_list_capacity(list)
            if now != capacity {
                copied += min(now, capacity)
                capacity = now
            }
        }
        let resizes = Int(oc_testing_list_resizes() - start)
        XCTAssertGreaterThan(resizes, 0, "the walk crossed boundaries")
        XCTAssertLessThanOrEqual(copied, 4 * changes, "\(resizes) resizes copied \(copied) slots in \(changes) changes")
        for handle in handles { XCTAssertEqual(oc_list_remove(list, handle), OC_OK) }
    }
}

/// A seeded generator (SplitMix64), so that a failing walk can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
