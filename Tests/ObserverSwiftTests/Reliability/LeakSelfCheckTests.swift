import Foundation
@_spi(EngineDiagnostics) import ObserverSwift
import XCTest

/// Deliberate leaks that LeakSanitizer must report despite the
/// suppressions of `make asan` (`.ci/lsan-xctest.supp`). Skipped unless
/// `OBSERVER_LSAN_SELFCHECK=1`; `make asan-selfcheck` runs it and succeeds
/// only if the leaks are reported.
final class LeakSelfCheckTests: XCTestCase {
    func testLeaksAreReported() throws {
        try XCTSkipUnless(
            ReliabilityEnvironment.isSet("OBSERVER_LSAN_SELFCHECK"),
            "deliberately leaks; run by make asan-selfcheck")
        // A subscription box whose capture is never released: retained once
        // too often, as a refcounting bug in the core would do.
        let event = Event<Int>()
        let capture = LeakedCapture()
        let token = event.subscribe { _ in withExtendedLifetime(capture) {} }
        _ = Unmanaged.passRetained(capture)
        token.cancel()
        try ObserverCore.reclaimNow()
        // A plain C allocation dropped on the floor.
        leakedPointer = nil
        leakedPointer = malloc(4096)
        leakedPointer = nil
        // A leaked object that has a weak reference (so a side table): LSan
        // must report it although the side table's own report cannot be
        // told from one of a live object (see .ci/lsan-xctest.supp).
        leakWeaklyReferencedObject()
    }
}

@inline(never)
private func leakWeaklyReferencedObject() {
    let object = WeaklyReferencedLeak()
    weak let observed = object
    _ = Unmanaged.passRetained(object)
    withExtendedLifetime(observed) {}
}

private final class WeaklyReferencedLeak {
    var payload = [Int](repeating: 7, count: 64)
}

private final class LeakedCapture: Sendable {
    let payload = [Int](repeating: 7, count: 64)
}

nonisolated(unsafe) private var leakedPointer: UnsafeMutableRawPointer?
