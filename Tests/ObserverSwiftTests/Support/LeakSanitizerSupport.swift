import Foundation

/// Helpers that keep `make asan` (LeakSanitizer) free of false reports
/// without suppressions.
///
/// A Swift object that has ever been weakly referenced owns a side table
/// whose address the runtime keeps shifted and tagged in the object's
/// refcount word, where LeakSanitizer cannot see it. When the object is still
/// alive at exit but no weak reference to it is left in memory, the side
/// table is reported as a direct leak. Suppressing those reports by the
/// runtime function that allocates side tables would hide every leaked object
/// that was ever weakly referenced (LeakSanitizer treats what a suppressed
/// block points to as reachable), so instead the few process-lifetime
/// objects involved keep a weak reference in a global, which LeakSanitizer
/// does follow. (Waits go through `waitUntilFulfilled`, in
/// ObserverTestSupport, for the same reason.)
enum LeakSanitizerSupport {
    /// Holds `OperationQueue.main` weakly for the whole process: Foundation's
    /// `NotificationCenter.addObserver(forName:object:queue:using:)` weakly
    /// references the queue it is given, and `NotificationObserver` defaults
    /// to the main queue, a singleton alive at exit. Call it from the
    /// `class func setUp()` of test classes that use the main queue.
    static func keepMainQueueSideTableReachable() {
        mainQueue = OperationQueue.main
    }

    // nonisolated(unsafe): written only from `class func setUp()`, which
    // XCTest runs on its one test thread, and never read.
    nonisolated(unsafe) private static weak var mainQueue: OperationQueue?
}
