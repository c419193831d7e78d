import Foundation
import ObserverSwift

/// How Flowduino's non-escaping `withObservers` / `withKeyedObservers`
/// report the observers they cannot call.
///
/// Those spellings call `body` on the calling thread before returning, as
/// Flowduino does, so they can call an observer only where its delivery
/// allows a call here and now: a synchronous one, or a main-actor one (or one
/// whose conformance is isolated to the main actor) when the call runs on
/// the main actor. An observer added with a queue or main-actor delivery
/// through ObserverSwift's ``ObserverRegistry/addObserver(_:delivery:fileID:line:)``
/// needs the escaping form (`dispatchToObservers`, or the registry's own
/// `withObservers`), which reaches every observer where its delivery says.
/// Such an observer is not called silently: the first call that meets one
/// writes this to standard error, once per process.
@usableFromInline
enum ObserversNotCalled {
    private static let lock = NSLock()
    /// Observers not called by these spellings since the process started
    /// (guarded by `lock`).
    nonisolated(unsafe) private static var total = 0

    /// Observers these spellings could not call so far (for tests).
    static var notCalledSoFar: Int { lock.withLock { total } }

    /// Counts `count` observers not called and writes the report unless one
    /// was written before.
    @usableFromInline
    static func report(_ count: Int, spelling: String, escapingSpelling: String) {
        let first = lock.withLock {
            defer { total += count }
            return total == 0
        }
        guard first else { return }
        let message =
            "ObserverSwiftCompat: \(spelling) with a non-escaping closure calls observers on this thread only; "
            + "\(count) observer(s) whose delivery is a queue or the main actor were not called by it. "
            + "Use \(escapingSpelling) (an escaping @Sendable closure) to reach every observer where its "
            + "delivery says. (Reported once per process.)\n"
        FileHandle.standardError.write(Data(message.utf8))
    }
}
