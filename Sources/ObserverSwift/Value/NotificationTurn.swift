import Foundation
import Synchronization

/// The right to run a notification round of one ``ObservableValue``.
///
/// Setters on different threads take turns (a lock held across store and
/// delivery), so every observer sees the values in the order they were set.
/// A handler that sets the same value again runs on the thread that already
/// holds the turn: taking the lock again would deadlock, so the value knows
/// its turn's owner and queues such a set behind the round in progress.
@usableFromInline
final class NotificationTurn: @unchecked Sendable {
    // @unchecked: `lock` is thread-safe; `owner` is atomic.

    @usableFromInline
    let lock = NSLock()

    /// The thread holding the turn, or 0. Relaxed is enough: a thread reads
    /// its own identifier here only if it stored it itself (program order);
    /// stores by other threads are other identifiers or 0, and the owner
    /// clears it before unlocking.
    @usableFromInline
    let owner = Atomic<UInt>(0)

    @usableFromInline
    init() {}

    /// Whether `thread` holds the turn (a set from inside a handler).
    @inlinable
    func isHeld(by thread: UInt) -> Bool {
        owner.load(ordering: .relaxed) == thread
    }

    /// Waits for the turn; `thread` must not hold it already.
    @inlinable
    func acquire(by thread: UInt) {
        lock.lock()
        owner.store(thread, ordering: .relaxed)
    }

    @inlinable
    func release() {
        owner.store(0, ordering: .relaxed)
        lock.unlock()
    }
}

/// An identifier of the calling thread, unique among running threads.
@inlinable
func currentThreadIdentifier() -> UInt {
    #if canImport(Darwin)
        UInt(bitPattern: pthread_self())  // a pointer on Darwin
    #else
        UInt(pthread_self())  // an integer on Linux
    #endif
}
