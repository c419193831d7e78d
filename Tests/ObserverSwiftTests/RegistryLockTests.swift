import Foundation
import ObserverTestSupport
import XCTest

@testable import ObserverSwift

/// The registries' writer lock: exclusive and recursive under contention,
/// with its sleeping condition made only by a thread that had to wait.
final class RegistryLockTests: XCTestCase {
    /// A plain counter guarded by the lock only.
    private final class Guarded: @unchecked Sendable {
        // @unchecked: `count` is only touched while `lock` is held.
        let lock = RegistryLock()
        var count = 0
    }

    func testAnUncontendedLockMakesNoCondition() {
        let guarded = Guarded()
        for _ in 0..<1_000 {
            guarded.lock.lock()
            guarded.lock.lock()
            guarded.count += 1
            guarded.lock.unlock()
            guarded.lock.unlock()
        }
        XCTAssertEqual(guarded.count, 1_000)
        XCTAssertFalse(guarded.lock.hasCondition, "no thread waited")
    }

    func testContendedLockIsExclusiveAndRecursive() {
        let guarded = Guarded()
        let threads = 4
        let rounds = 20_000
        runOnThreads(threads) { _ in
            for round in 0..<rounds {
                guarded.lock.lock()
                let before = guarded.count
                if round % 7 == 0 {
                    guarded.lock.lock()  // recursive
                    guarded.count += 1
                    guarded.lock.unlock()
                } else {
                    guarded.count += 1
                }
                XCTAssertEqual(guarded.count, before + 1)
                guarded.lock.unlock()
            }
        }
        XCTAssertEqual(guarded.count, threads * rounds)
    }
}
