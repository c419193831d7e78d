// Shared helpers of the C API tests: fake contexts and a recording release callback.
import CObserverCore
import Synchronization
import XCTest

/// Contexts released by the core in these tests (fake pointers 1, 2, ...).
let coreTestReleases = Mutex<[Int]>([])

/// The release callback for core tests: records which context was released.
let coreTestRelease: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
    let value = Int(bitPattern: context)
    coreTestReleases.withLock { $0.append(value) }
}

func fakeContext(_ value: Int) -> UnsafeMutableRawPointer {
    UnsafeMutableRawPointer(bitPattern: value)!
}

func takeReleases() -> [Int] {
    coreTestReleases.withLock { released in
        defer { released.removeAll() }
        return released.sorted()
    }
}
