import CObserverCore
import CObserverCore.Testing
import Foundation
import Synchronization
import XCTest

/// Sends on two threads while one writer grows the list and shrinks it by
/// compaction, round after round, moving contexts that stay stored across a
/// send: every send calls each context stored for its whole duration exactly
/// once, and no context twice. Run under ThreadSanitizer and
/// AddressSanitizer too (old arrays are released only after the senders'
/// sections end; a missing grace period is a use after free).
final class ListShrinkConcurrencyTests: XCTestCase {
    /// Shared between the writer and the senders.
    final class Rounds: Sendable {
        /// The last round whose stable contexts are all added (-1: none).
        let stableRound = Atomic<Int>(-1)
        /// The last round whose stable contexts' removal may have begun (-1: none).
        let retiringRound = Atomic<Int>(-1)
        let finished = Atomic<Bool>(false)
        let sends = Atomic<Int>(0)
        let checkedSends = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
    }

    static let stablePerRound = 8
    static let transientsPerRound = 600

    /// Stable contexts are even, transients odd: fake pointers, never dereferenced.
    static func stable(round: Int, _ index: Int) -> Int { (round * stablePerRound + index + 1) << 1 }
    static func transient(round: Int, _ index: Int) -> Int { ((round * transientsPerRound + index) << 1) | 1 }

    func testConcurrentSendsWhileTheWriterShrinksDeliverEachStoredContextOncePerSend() throws {
        let list = try XCTUnwrap(oc_list_create(nil))
        defer { oc_list_destroy(list) }
        let rounds = Rounds()
        let listAddress = UInt(bitPattern: list)
        let roundCount = 150

        let done = DispatchGroup()
        for _ in 0..<2 {
            done.enter()
            Thread {
                let list = OpaquePointer(bitPattern: listAddress)!
                while !rounds.finished.load(ordering: .sequentiallyConsistent) {
                    Self.sendOnce(list, rounds)
                }
                done.leave()
            }.start()
        }

        var previousStable: [oc_handle_t] = []
        for round in 0..<roundCount {
            var handle = noHandle
            // Transients first, then this round's stable contexts above them.
            var transients: [oc_handle_t] = []
            for index in 0..<Self.transientsPerRound {
                XCTAssertEqual(oc_list_add(list, fakeContext(Self.transient(round: round, index)), &handle), OC_OK)
                transients.append(handle)
            }
            var stable: [oc_handle_t] = []
            for index in 0..<Self.stablePerRound {
                XCTAssertEqual(oc_list_add(list, fakeContext(Self.stable(round: round, index)), &handle), OC_OK)
                stable.append(handle)
            }
            rounds.stableRound.store(round, ordering: .sequentiallyConsistent)
            // Removing the transients compacts the list (several times as the
            // count falls through quarters), moving the stable contexts down;
            // the later removals go through the moved table.
            for handle in transients {
                XCTAssertEqual(oc_list_remove(list, handle), OC_OK)
            }
            rounds.retiringRound.store(round - 1, ordering: .sequentiallyConsistent)
            for handle in previousStable {
                XCTAssertEqual(oc_list_remove(list, handle), OC_OK, "a moved stable context's handle")
            }
            previousStable = stable
        }
        rounds.finished.store(true, ordering: .sequentiallyConsistent)
        XCTAssertEqual(done.wait(timeout: .now() + 120), .success)
        XCTAssertEqual(oc_list_count(list), Self.stablePerRound)
        XCTAssertLessThanOrEqual(oc_list_capacity(list), 2 * Self.stablePerRound)
        XCTAssertEqual(rounds.failures.load(ordering: .sequentiallyConsistent), 0)
        XCTAssertGreaterThan(rounds.checkedSends.load(ordering: .sequentiallyConsistent), 0)
        XCTAssertEqual(oc_reclaim_barrier(), OC_OK)
    }

    /// One send: counts the calls per context and checks them.
    private static func sendOnce(_ list: OpaquePointer, _ rounds: Rounds) {
        let stableRound = rounds.stableRound.load(ordering: .sequentiallyConsistent)
        var seen = Set<Int>()
        var duplicates = 0
        var stableCalls = [Int](repeating: 0, count: stablePerRound)
        let reader = oc_read_begin()
        let view = oc_list_view(list)
        var index: UInt32 = 0
        while index < view.count {
            if let context = oc_view_context(view, index) {
                let value = Int(bitPattern: context)
                if !seen.insert(value).inserted { duplicates += 1 }
                if stableRound >= 0 && value & 1 == 0 {
                    let ordinal = (value >> 1) - 1 - stableRound * stablePerRound
                    if (0..<stablePerRound).contains(ordinal) { stableCalls[ordinal] += 1 }
                }
            }
            index &+= 1
        }
        oc_read_end(reader)
        let retiring = rounds.retiringRound.load(ordering: .sequentiallyConsistent)
        rounds.sends.add(1, ordering: .relaxed)
        var failed = duplicates > 0
        // Stored for the whole send: added before it began, removal not begun when it ended.
        if stableRound >= 0 && retiring < stableRound {
            rounds.checkedSends.add(1, ordering: .relaxed)
            if stableCalls != [Int](repeating: 1, count: stablePerRound) { failed = true }
        }
        if failed {
            rounds.failures.add(1, ordering: .relaxed)
        }
    }
}
