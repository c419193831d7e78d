import CObserverCore
import CObserverCore.Testing
import Dispatch
import ObserverTestSupport
import XCTest

/// The C keymap API called directly. Keys are `Int`s: a key_context is a
/// malloc'd Int (freed by release_key), a probe is a pointer to an Int, and
/// contexts are small non-NULL integers cast to pointers.
final class KeymapTests: XCTestCase {
    private var map: OpaquePointer!

    override func setUp() {
        super.setUp()
        map = oc_keymap_create(intKeyEquals, releaseIntKey, nil)
        XCTAssertNotNil(map)
    }

    override func tearDown() {
        oc_keymap_destroy(map)
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        super.tearDown()
    }

    // MARK: Helpers

    /// A good hash, or a constant one to make every key collide.
    private func hash(_ key: Int, colliding: Bool = false) -> UInt64 {
        colliding ? 7 : UInt64(bitPattern: Int64(key)) &* 0x9E37_79B9_7F4A_7C15
    }

    private func context(_ value: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: value)!
    }

    @discardableResult
    private func add(_ key: Int, _ value: Int, colliding: Bool = false) -> (oc_status_t, oc_handle_t, Bool) {
        let keyContext = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        keyContext.initialize(to: key)
        var handle = noHandle
        var adopted = false
        var probe = key
        let status = oc_keymap_add(
            map, hash(key, colliding: colliding), &probe, keyContext, context(value), &handle, &adopted)
        if !adopted { keyContext.deallocate() }
        return (status, handle, adopted)
    }

    private func remove(_ key: Int, _ handle: oc_handle_t, colliding: Bool = false) -> oc_status_t {
        var probe = key
        return oc_keymap_remove(map, hash(key, colliding: colliding), &probe, handle)
    }

    /// The contexts a send to `key` would call, read as a sender does.
    private func visible(_ key: Int, colliding: Bool = false) -> [Int] {
        var probe = key
        let reader = oc_read_begin()
        defer { oc_read_end(reader) }
        guard let list = oc_keymap_lookup(map, hash(key, colliding: colliding), &probe) else { return [] }
        let view = oc_list_view(list)
        return (0..<view.count).compactMap { oc_view_context(view, $0).map { Int(bitPattern: $0) } }
    }

    // MARK: Tests

    func testAddCreatesTheKeyOnceAndLookupFindsItsList() {
        let (status, _, adopted) = add(1, 10)
        XCTAssertEqual(status, OC_OK)
        XCTAssertTrue(adopted, "first add creates the key and adopts its context")
        let second = add(1, 11)
        XCTAssertEqual(second.0, OC_OK)
        XCTAssertFalse(second.2, "the key exists: the caller keeps its key_context")
        add(2, 20)

        XCTAssertEqual(oc_keymap_key_count(map), 2)
        XCTAssertFalse(oc_keymap_is_empty(map))
        XCTAssertEqual(Set(visible(1)), [10, 11])
        XCTAssertEqual(visible(2), [20])
        XCTAssertEqual(visible(3), [], "absent key: NULL list")
        var probe = 1
        XCTAssertEqual(oc_keymap_count(map, hash(1), &probe), 2)
    }

    func testFindHashReturnsAnEntryWithoutComparingKeys() {
        add(5, 50)
        let reader = oc_read_begin()
        let entry = oc_keymap_find_hash(map, hash(5))
        XCTAssertNotNil(entry)
        XCTAssertEqual(entry?.pointee.hash, hash(5))
        XCTAssertEqual(entry?.pointee.key_context.load(as: Int.self), 5)
        XCTAssertNil(oc_keymap_find_hash(map, hash(6)))
        oc_read_end(reader)
    }

    func testCollidingKeysAreComparedExactly() {
        var handles: [Int: oc_handle_t] = [:]
        for key in 0..<200 {
            let (status, handle, adopted) = add(key, key + 1, colliding: true)
            XCTAssertEqual(status, OC_OK)
            XCTAssertTrue(adopted)
            handles[key] = handle
        }
        XCTAssertEqual(oc_keymap_key_count(map), 200)
        for key in 0..<200 { XCTAssertEqual(visible(key, colliding: true), [key + 1], "key \(key)") }
        XCTAssertEqual(visible(1_000, colliding: true), [])
        // A key's handle removes nothing under a colliding neighbour.
        XCTAssertEqual(remove(1, handles[0]!, colliding: true), OC_ENOENT)
        for key in stride(from: 0, to: 200, by: 2) {
            XCTAssertEqual(remove(key, handles[key]!, colliding: true), OC_OK)
        }
        for key in 0..<200 {
            XCTAssertEqual(visible(key, colliding: true), key % 2 == 0 ? [] : [key + 1], "key \(key)")
        }
    }

    func testRemovingTheLastContextRemovesTheKeyAndRetiresIt() {
        let keysBefore = oc_keymap_live_keys()
        let (_, first, _) = add(1, 10)
        let (_, second, _) = add(1, 11)
        XCTAssertEqual(oc_keymap_live_keys() - keysBefore, 1)
        XCTAssertEqual(remove(1, first), OC_OK)
        XCTAssertEqual(oc_keymap_key_count(map), 1, "one context left")
        XCTAssertEqual(remove(1, second), OC_OK)
        XCTAssertEqual(oc_keymap_key_count(map), 0)
        XCTAssertTrue(oc_keymap_is_empty(map))
        XCTAssertEqual(oc_keymap_live_keys(), keysBefore)
        XCTAssertEqual(remove(1, second), OC_ENOENT, "stale handle, absent key")
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(oc_stats().pending_objects, 0, "entry, list and key released")
    }

    func testAReaderKeepsAKeyRemovedDuringItsSection() {
        let (_, handle, _) = add(1, 10)
        var probe = 1
        let reader = oc_read_begin()
        let list = oc_keymap_lookup(map, hash(1), &probe)
        XCTAssertNotNil(list)
        XCTAssertEqual(remove(1, handle), OC_OK)  // the key goes while we read
        XCTAssertNil(oc_keymap_lookup(map, hash(1), &probe), "a new lookup no longer finds it")
        // The old list is still readable (retired, not freed): its slot is now empty.
        let view = oc_list_view(list!)
        XCTAssertEqual((0..<view.count).compactMap { oc_view_context(view, $0) }.count, 0)
        XCTAssertEqual(oc_reclaim_barrier(), OC_EINSECTION, "cannot wait for ourselves")
        oc_read_end(reader)
    }

    func testStaleForeignAndNullArgumentsAreHarmless() {
        let (_, handle, _) = add(1, 10)
        add(2, 20)
        XCTAssertEqual(remove(2, handle), OC_ENOENT, "handle of another key")
        XCTAssertEqual(remove(3, handle), OC_ENOENT, "absent key")
        XCTAssertEqual(remove(1, noHandle), OC_ENOENT)
        var probe = 1
        XCTAssertEqual(oc_keymap_remove(nil, 0, &probe, handle), OC_EINVAL)
        XCTAssertEqual(oc_keymap_remove(map, hash(1), nil, handle), OC_EINVAL)
        var out = forgedHandle(sequence: 99)
        var adopted = true
        XCTAssertEqual(oc_keymap_add(map, hash(1), &probe, nil, context(1), &out, &adopted), OC_EINVAL)
        assertSameHandle(out, noHandle)
        XCTAssertFalse(adopted)
        XCTAssertNil(oc_keymap_create(nil, nil, nil), "equality callback is required")
        XCTAssertTrue(oc_keymap_contains(map, hash(1), &probe, handle))
        XCTAssertEqual(remove(1, handle), OC_OK)
        XCTAssertFalse(oc_keymap_contains(map, hash(1), &probe, handle))
        XCTAssertEqual(visible(2), [20])
    }

    func testTryRemoveRemovesWithoutBlocking() {
        let (_, handle, _) = add(4, 40)
        var probe = 4
        XCTAssertEqual(oc_keymap_try_remove(map, hash(4), &probe, handle), OC_OK)
        XCTAssertEqual(oc_keymap_key_count(map), 0)
        XCTAssertEqual(oc_keymap_try_remove(map, hash(4), &probe, handle), OC_ENOENT)
    }

    func testRemoveIfVisitsEveryKeyAndDropsEmptiedOnes() {
        for key in 0..<10 {
            add(key, 100 + key)
            add(key, 200 + key)
        }
        var removed = 0
        // Remove the 1xx contexts of every key, and the 2xx of even keys.
        let status = oc_keymap_remove_if(
            map,
            { context, _ in
                let value = Int(bitPattern: context)
                return value < 200 || value % 2 == 0
            }, nil, &removed)
        XCTAssertEqual(status, OC_OK)
        XCTAssertEqual(removed, 15)
        XCTAssertEqual(oc_keymap_key_count(map), 5, "even keys emptied and were removed")
        for key in 0..<10 { XCTAssertEqual(visible(key), key % 2 == 0 ? [] : [200 + key]) }

        var probe = 3
        XCTAssertEqual(oc_keymap_remove_key_if(map, hash(3), &probe, nil, nil, &removed), OC_OK)
        XCTAssertEqual(removed, 1)
        XCTAssertEqual(oc_keymap_key_count(map), 4)
        XCTAssertEqual(oc_keymap_clear(map, &removed), OC_OK)
        XCTAssertEqual(removed, 4)
        XCTAssertTrue(oc_keymap_is_empty(map))
    }

    func testForEachVisitsASnapshotAndMayWrite() {
        for key in 0..<20 { add(key, key + 1) }
        final class Visit {
            var keys: [Int] = []
            var map: OpaquePointer?
        }
        let visit = Visit()
        visit.map = map
        let status = oc_keymap_for_each(
            map,
            { entry, argument in
                let visit = Unmanaged<Visit>.fromOpaque(argument!).takeUnretainedValue()
                let key = entry.pointee.key_context.load(as: Int.self)
                visit.keys.append(key)
                // Writers are allowed from a visit: empty this key.
                var removed = 0
                var probe = key
                oc_keymap_remove_key_if(visit.map, entry.pointee.hash, &probe, nil, nil, &removed)
                return true
            }, Unmanaged.passUnretained(visit).toOpaque())
        XCTAssertEqual(status, OC_OK)
        XCTAssertEqual(Set(visit.keys), Set(0..<20))
        XCTAssertEqual(oc_keymap_key_count(map), 0, "emptied keys are removed after their visit")
    }

    func testTheTableShrinksAfterMassRemoval() {
        let small = oc_keymap_table_bytes(map)
        var handles: [oc_handle_t] = []
        for key in 0..<20_000 { handles.append(add(key, key + 1).1) }
        let large = oc_keymap_table_bytes(map)
        XCTAssertGreaterThan(large, small * 100)
        for key in 0..<20_000 { XCTAssertEqual(remove(key, handles[key]), OC_OK) }
        XCTAssertEqual(oc_keymap_key_count(map), 0)
        XCTAssertLessThan(oc_keymap_table_bytes(map), large / 100, "rebuilt without tombstones")
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(oc_stats().pending_objects, 0)
    }

    func testAllocationFailureChangesNothing() {
        add(1, 10)
        let keys = oc_keymap_key_count(map)
        for failures in 1...3 {
            oc_debug_fail_allocations(UInt32(failures))
            let (status, handle, _) = add(100 + failures, 1)
            oc_debug_fail_allocations(0)
            XCTAssertEqual(status, OC_ENOMEM)
            assertSameHandle(handle, noHandle)
            XCTAssertEqual(oc_keymap_key_count(map), keys, "no half-created key left behind")
        }
        XCTAssertEqual(visible(1), [10])
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(oc_stats().pending_objects, 0)
    }

    /// A key's first context lives in the key's own slot; the second gives
    /// the key a list. Handles issued before stay valid, readers see every
    /// context once, and the live-context count counts each once.
    func testAKeyGrowsFromItsSlotToAListAndKeepsItsHandles() {
        let liveBefore = oc_stats().live_contexts
        let (_, first, adopted) = add(1, 10)
        XCTAssertTrue(adopted)
        XCTAssertEqual(visible(1), [10])
        XCTAssertEqual(oc_stats().live_contexts - liveBefore, 1)
        let (status, second, secondAdopted) = add(1, 11)
        XCTAssertEqual(status, OC_OK)
        XCTAssertFalse(secondAdopted)
        XCTAssertEqual(Set(visible(1)), [10, 11])
        XCTAssertEqual(oc_stats().live_contexts - liveBefore, 2, "the moved context counts once")
        var probe = 1
        XCTAssertEqual(oc_keymap_count(map, hash(1), &probe), 2)
        XCTAssertTrue(oc_keymap_contains(map, hash(1), &probe, first), "the slot's handle names the moved context")
        XCTAssertEqual(remove(1, first), OC_OK)
        XCTAssertEqual(remove(1, first), OC_ENOENT)
        XCTAssertEqual(visible(1), [11])
        XCTAssertTrue(oc_keymap_contains(map, hash(1), &probe, second))
        XCTAssertEqual(oc_keymap_try_remove(map, hash(1), &probe, second), OC_OK)
        XCTAssertEqual(oc_keymap_key_count(map), 0)
        XCTAssertEqual(oc_stats().live_contexts, liveBefore)
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(oc_stats().pending_objects, 0)
    }

    /// A key in its slot form: removals by predicate and by try_remove, and a
    /// growth that fails for memory, change nothing else.
    func testAKeysSlotFormRemovalsAndAFailedGrowth() {
        let (_, first, _) = add(1, 10)
        oc_debug_fail_allocations(1)
        let (status, handle, _) = add(1, 11)
        oc_debug_fail_allocations(0)
        XCTAssertEqual(status, OC_ENOMEM)
        assertSameHandle(handle, noHandle)
        XCTAssertEqual(visible(1), [10])
        var probe = 1
        XCTAssertEqual(oc_keymap_count(map, hash(1), &probe), 1)
        XCTAssertEqual(oc_keymap_try_remove(map, hash(1), &probe, noHandle), OC_ENOENT)
        var removed = 0
        XCTAssertEqual(oc_keymap_remove_key_if(map, hash(1), &probe, { _, _ in false }, nil, &removed), OC_OK)
        XCTAssertEqual(removed, 0)
        XCTAssertEqual(visible(1), [10])
        XCTAssertEqual(oc_keymap_remove_key_if(map, hash(1), &probe, nil, nil, &removed), OC_OK)
        XCTAssertEqual(removed, 1)
        XCTAssertEqual(oc_keymap_key_count(map), 0)
        XCTAssertEqual(remove(1, first), OC_ENOENT)
        add(2, 20)
        add(3, 30)
        add(3, 31)
        XCTAssertEqual(oc_keymap_clear(map, &removed), OC_OK)
        XCTAssertEqual(removed, 3)
        XCTAssertEqual(oc_keymap_key_count(map), 0)
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
        XCTAssertEqual(oc_stats().pending_objects, 0)
    }

    /// Two writers add to and remove from one key, so that one's add grows
    /// the key's slot into a list while the other removes the slot's
    /// context, and a reader views the key meanwhile: every add is removed
    /// exactly once by its own handle, readers see only those contexts, and
    /// the key goes at the end with nothing left counted.
    func testConcurrentGrowthAndRemovalOfOneKey() {
        let liveBefore = oc_stats().live_contexts
        let state = ConcurrentState(map: map)
        let done = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            let map = state.map
            var probe = 5
            let hash = UInt64(5)
            if worker < 2 {
                for _ in 0..<20_000 {
                    let keyContext = UnsafeMutablePointer<Int>.allocate(capacity: 1)
                    keyContext.initialize(to: 5)
                    var handle = noHandle
                    var adopted = false
                    let status = oc_keymap_add(
                        map, hash, &probe, keyContext, UnsafeMutableRawPointer(bitPattern: worker + 1)!, &handle,
                        &adopted)
                    if !adopted { keyContext.deallocate() }
                    if status != OC_OK || oc_keymap_remove(map, hash, &probe, handle) != OC_OK {
                        state.failures.increment()
                    }
                }
                done.increment()
                return
            }
            var rounds = 0
            while done.value < 2 && rounds < 1_000_000 {
                rounds += 1
                let reader = oc_read_begin()
                if let list = oc_keymap_lookup(map, hash, &probe) {
                    let view = oc_list_view(list)
                    for index in 0..<view.count {
                        if let context = oc_view_context(view, index), !(1...2).contains(Int(bitPattern: context)) {
                            state.failures.increment()
                        }
                    }
                }
                oc_read_end(reader)
            }
        }
        XCTAssertEqual(state.failures.value, 0)
        XCTAssertEqual(oc_keymap_key_count(map), 0)
        XCTAssertEqual(oc_stats().live_contexts, liveBefore)
    }

    func testConcurrentReadersWhileKeysComeAndGo() {
        let keys = 64
        // Key k, when present, holds only context k + 1; its key_context
        // is k (poisoned when released, so a use after release shows).
        let state = ConcurrentState(map: map)
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            let map = state.map
            if worker == 2 {
                for round in 0..<20_000 {
                    let key = (round &* 7) % keys
                    let keyContext = UnsafeMutablePointer<Int>.allocate(capacity: 1)
                    keyContext.initialize(to: key)
                    var handle = noHandle
                    var adopted = false
                    var probe = key
                    let hash = UInt64(key % 5)  // collisions on purpose
                    _ = oc_keymap_add(
                        map, hash, &probe, keyContext, UnsafeMutableRawPointer(bitPattern: key + 1)!, &handle,
                        &adopted)
                    if !adopted { keyContext.deallocate() }
                    if oc_keymap_remove(map, hash, &probe, handle) != OC_OK {
                        state.failures.increment()
                    }
                }
                return
            }
            // Bounded, not "until the writer stops": concurrentPerform may
            // run the three iterations on fewer threads.
            var seed = UInt64(worker + 1)
            for _ in 0..<100_000 {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1
                var key = Int(seed >> 40) % keys
                let reader = oc_read_begin()
                if let entry = oc_keymap_find(map, UInt64(key % 5), &key) {
                    if entry.pointee.key_context.load(as: Int.self) != key { state.failures.increment() }
                    let view = oc_list_view(oc_key_entry_list(entry))
                    for index in 0..<view.count {
                        if let context = oc_view_context(view, index), Int(bitPattern: context) != key + 1 {
                            state.failures.increment()
                        }
                    }
                }
                oc_read_end(reader)
            }
        }
        XCTAssertEqual(state.failures.value, 0)
        XCTAssertEqual(oc_keymap_key_count(map), 0)
    }
}

/// What the concurrent test's threads share.
private final class ConcurrentState: @unchecked Sendable {
    // @unchecked: `map` is internally synchronized; `failures` is.
    let map: OpaquePointer
    let failures = LockedCounter()
    init(map: OpaquePointer) { self.map = map }
}
