// Shared helpers of the C API tests: fake contexts and a recording release callback.
import CObserverCore
import CObserverCore.Testing
import Foundation
import ObserverTestSupport
import XCTest

/// Contexts released by the core in these tests (fake pointers 1, 2, ...).
let coreTestReleases = SharedVariable<[Int]>([])

/// The release callback for core tests: records which context was released.
let coreTestRelease: @convention(c) (UnsafeMutableRawPointer) -> Void = { context in
    let value = Int(bitPattern: context)
    coreTestReleases.update { $0.append(value) }
}

func fakeContext(_ value: Int) -> UnsafeMutableRawPointer {
    UnsafeMutableRawPointer(bitPattern: value)!
}

func takeReleases() -> [Int] {
    coreTestReleases.update { released in
        defer { released.removeAll() }
        return released.sorted()
    }
}

/// Handles compare as the core compares them (`oc_handle_equal`).
func assertSameHandle(
    _ lhs: oc_handle_t, _ rhs: oc_handle_t, _ message: String = "", file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertTrue(oc_handle_equal(lhs, rhs), "\(lhs) is not \(rhs) \(message)", file: file, line: line)
}

func assertDifferentHandles(
    _ lhs: oc_handle_t, _ rhs: oc_handle_t, _ message: String = "", file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertFalse(oc_handle_equal(lhs, rhs), "\(lhs) is \(rhs) \(message)", file: file, line: line)
}

/// `noHandle`: no add issues it.
let noHandle = oc_handle_none()

/// A handle no add issued: `sequence` at slot `index` (for bad-input tests).
func forgedHandle(sequence: UInt64, index: UInt32 = 0) -> oc_handle_t {
    oc_handle_t(sequence: sequence, index: index)
}

/// oc_key_equal_fn for `Int` keys: a key_context and a probe each point at an Int.
func intKeyEquals(_ keyContext: UnsafeRawPointer, _ probe: UnsafeRawPointer?) -> Bool {
    guard let probe else { return false }
    return keyContext.load(as: Int.self) == probe.load(as: Int.self)
}

/// release_key for `Int` keys: poisons, then frees (a use after release shows).
func releaseIntKey(_ keyContext: UnsafeMutableRawPointer) {
    let key = keyContext.assumingMemoryBound(to: Int.self)
    key.pointee = -999_999
    key.deallocate()
}
