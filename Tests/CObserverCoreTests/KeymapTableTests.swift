import CObserverCore
import CObserverCore.Testing
import Dispatch
import Foundation
import ObserverTestSupport
import XCTest

/// The keymap's table under a writer that keeps growing, emptying and
/// rebuilding it: lookups never take a lock, so a key that stays linked
/// must be found by every lookup, whatever the writer does meanwhile to the
/// probe run it sits in (tombstones, reused slots, a rebuilt table).
final class KeymapTableTests: XCTestCase {
    func testStableKeysAreAlwaysFoundWhileTheirProbeRunsChurn() {
        let table = ChurnedTable()
        defer { table.destroy() }
        for key in 0..<ChurnedTable.stable { table.add(key) }
        let misses = LockedCounter()
        let rounds = 3_000
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            if worker == 0 {
                // Grows the table with 64 keys sharing the stable keys'
                // hashes (2 000 every 16th round), removes them all, again
                // and again: every round leaves tombstones in the stable
                // keys' runs, reuses them, and rebuilds the table.
                for round in 0..<rounds {
                    let base = ChurnedTable.stable + (round % 4) * 10_000
                    let count = round % 16 == 0 ? 2_000 : 64
                    let handles = (base..<(base + count)).map { ($0, table.add($0)) }
                    for (key, handle) in handles where !table.remove(key, handle) { misses.increment() }
                }
                return
            }
            for index in 0..<(rounds * 100) where !table.finds(index % ChurnedTable.stable) {
                misses.increment()
            }
        }
        XCTAssertEqual(misses.value, 0, "a linked key was not found, or another key's entry was")
        XCTAssertEqual(oc_keymap_key_count(table.map), ChurnedTable.stable)
    }

    func testLookupsOfAbsentKeysEndInFullAndTombstonedTables() {
        let map = oc_keymap_create(intKeyEquals, releaseIntKey, nil)!
        defer {
            oc_keymap_destroy(map)
            XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        }
        var handles: [oc_handle_t] = []
        // All under one hash: one long run, then tombstones only.
        for key in 0..<100 {
            let keyContext = UnsafeMutablePointer<Int>.allocate(capacity: 1)
            keyContext.initialize(to: key)
            var handle = oc_handle_t(sequence: 0, index: 0)
            var adopted = false
            var probe = key
            XCTAssertEqual(
                oc_keymap_add(map, 42, &probe, keyContext, UnsafeMutableRawPointer(bitPattern: 1)!, &handle, &adopted),
                OC_OK)
            handles.append(handle)
        }
        var absent = 1_000
        var reader = oc_read_begin()
        XCTAssertNil(oc_keymap_find(map, 42, &absent))
        XCTAssertNotNil(oc_keymap_find_hash(map, 42))
        oc_read_end(reader)
        for key in 0..<100 {
            var probe = key
            XCTAssertEqual(oc_keymap_remove(map, 42, &probe, handles[key]), OC_OK)
        }
        reader = oc_read_begin()
        XCTAssertNil(oc_keymap_find(map, 42, &absent))
        XCTAssertNil(oc_keymap_find_hash(map, 42))
        oc_read_end(reader)
        XCTAssertEqual(oc_keymap_key_count(map), 0)
    }
}

/// A keymap of `Int` keys whose hash is `key % stable`: keys 0..<stable
/// stay, the others share their probe runs.
private final class ChurnedTable: @unchecked Sendable {
    // @unchecked: the keymap is internally synchronized.
    static let stable = 8
    let map = oc_keymap_create(intKeyEquals, releaseIntKey, nil)!

    func hash(_ key: Int) -> UInt64 { UInt64(key % Self.stable) }

    @discardableResult
    func add(_ key: Int) -> oc_handle_t {
        let keyContext = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        keyContext.initialize(to: key)
        var handle = oc_handle_t(sequence: 0, index: 0)
        var adopted = false
        var probe = key
        let status = oc_keymap_add(
            map, hash(key), &probe, keyContext, UnsafeMutableRawPointer(bitPattern: key + 1)!, &handle, &adopted)
        precondition(status == OC_OK, "oc_keymap_add failed")
        if !adopted { keyContext.deallocate() }
        return handle
    }

    func remove(_ key: Int, _ handle: oc_handle_t) -> Bool {
        var probe = key
        return oc_keymap_remove(map, hash(key), &probe, handle) == OC_OK
    }

    /// Whether a lookup, as a sender makes it, finds `key`'s own entry.
    func finds(_ key: Int) -> Bool {
        var probe = key
        let reader = oc_read_begin()
        defer { oc_read_end(reader) }
        guard let entry = oc_keymap_find(map, hash(key), &probe) else { return false }
        return entry.pointee.key_context.load(as: Int.self) == key
    }

    func destroy() {
        oc_keymap_destroy(map)
        precondition(oc_reclaim_barrier() == OC_OK)
    }
}
