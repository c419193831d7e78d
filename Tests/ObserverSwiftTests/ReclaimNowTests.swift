@_spi(EngineDiagnostics) import ObserverSwift
import XCTest

final class ReclaimNowTests: XCTestCase {
    private final class Capture: Sendable {}

    /// A cancelled handler that holds the last reference to another source
    /// deallocates that source when it is released, and the source's own
    /// subscriptions are retired only then. One `reclaimNow()` releases the
    /// whole chain: three sources, each held by the previous one's handler.
    func testReclaimNowReleasesWhatReleasingRetiresInTurn() throws {
        weak var deepest: Capture?
        let outer = Event<Int>()
        let token: Subscription = {
            let capture = Capture()
            deepest = capture
            let inner = Event<Int>()
            _ = inner.subscribe { _ in withExtendedLifetime(capture) {} }
            let middle = Event<Int>()
            _ = middle.subscribe { _ in withExtendedLifetime(inner) {} }
            return outer.subscribe { _ in withExtendedLifetime(middle) {} }
        }()
        XCTAssertNotNil(deepest)
        token.cancel()
        try ObserverCore.reclaimNow()
        XCTAssertNil(deepest, "the chain's last capture outlived reclaimNow()")
    }
}
