import Foundation
import ObserverSwift

/// What a batching export's publisher needs: its bounds and the bridge's linger thread.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct BatchSettings: Sendable {
    /// Events per batch frame at most.
    let maxEvents: Int
    /// Bytes per batch frame at most (header included): below the server's maximum payload.
    let maxBytes: Int
    let linger: BatchLinger

    /// Room left under the server's maximum payload for the message's headers (the
    /// at-least-once `Nats-Msg-Id`, about 40 bytes) and the protocol line.
    static let payloadReserve = 512
}

/// The events of one publisher waiting to go out in one batch frame. Guarded by the
/// publisher's `batchLock`.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct PendingBatch {
    /// The frame being built: ``BatchFrameHeader/size`` bytes of room, then the events.
    var buffer: UnsafeMutableRawPointer?
    var capacity = 0
    var byteCount = BatchFrameHeader.size
    var count = 0
    var firstSequence: UInt64 = 0
    /// Which batch this is: a linger entry flushes only the batch it was scheduled for.
    var generation: UInt64 = 0

    /// Capacity kept after a flush; a larger buffer is freed, so that a publisher that once sent
    /// a large batch does not hold its memory for good.
    static let retainedCapacity = 64 * 1024

    /// Makes room for `more` bytes, growing by doubling up to `limit` (which the caller checked).
    mutating func reserve(_ more: Int, limit: Int) {
        let needed = byteCount + more
        guard needed > capacity else { return }
        var grown = max(256, capacity)
        while grown < needed { grown *= 2 }
        grown = min(grown, limit)
        buffer = realloc(buffer, grown)
        // Out of memory here is not something to recover from: the send would lose the event.
        precondition(buffer != nil, "out of memory for a batch of \(grown) bytes")
        capacity = grown
    }

    mutating func reset() {
        count = 0
        byteCount = BatchFrameHeader.size
        if capacity > Self.retainedCapacity {
            free(buffer)
            buffer = nil
            capacity = 0
        }
    }
}

/// The bridge's linger thread: flushes each batch at the latest `linger` after its first event.
///
/// A publisher schedules an entry when its batch gets its first event (under its own lock;
/// this class's lock is taken inside it, never the other way round). Every entry has the same
/// delay, so the queue is in deadline order and the thread only ever waits for its head. The
/// thread takes a publisher's lock only to send that publisher's batch, as a sender would:
/// it never holds a lock a sender needs while it waits. Entries of batches sent before their
/// deadline (full) stay until their deadline and are then skipped, so the queue holds at most
/// one entry per batch started in the last `linger`.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class BatchLinger: @unchecked Sendable {
    // @unchecked: `entries`, `head` and `isStopped` are touched only under `condition`'s lock.
    let lingerNanoseconds: UInt64
    private let condition = NSCondition()
    private var entries: [Entry] = []
    private var head = 0
    private var isStopped = false
    private let done = DispatchSemaphore(value: 0)
    private let thread = Locked<pthread_t?>(nil)

    struct Entry {
        let publisher: ExportedPublisher
        let generation: UInt64
        let deadline: UInt64
    }

    init(linger: Duration) {
        let (seconds, attoseconds) = linger.components
        lingerNanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
        let thread = Thread { [self] in
            self.thread.withLock { $0 = pthread_self() }
            run()
            done.signal()
        }
        thread.name = "ObserverNATS.linger"
        thread.start()
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Asks for `publisher`'s batch `generation` to be sent `linger` from now. False when the
    /// thread has stopped (the bridge is closing): the caller sends the batch itself at once.
    func schedule(_ publisher: ExportedPublisher, generation: UInt64) -> Bool {
        let deadline = Self.now() &+ lingerNanoseconds
        condition.lock()
        defer { condition.unlock() }
        if isStopped { return false }
        let wasEmpty = head == entries.count
        entries.append(Entry(publisher: publisher, generation: generation, deadline: deadline))
        if wasEmpty { condition.signal() }
        return true
    }

    private func run() {
        condition.lock()
        while true {
            while head == entries.count && !isStopped { condition.wait() }
            if isStopped {
                let rest = entries[head...]
                entries = []
                head = 0
                condition.unlock()
                for entry in rest { entry.publisher.lingerExpired(generation: entry.generation) }
                return
            }
            let entry = entries[head]
            let now = Self.now()
            if entry.deadline > now {
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(entry.deadline - now) / 1e9))
                continue
            }
            head += 1
            if head == entries.count {
                entries.removeAll(keepingCapacity: entries.count <= 1024)
                head = 0
            } else if head >= 1024 && head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
            condition.unlock()
            entry.publisher.lingerExpired(generation: entry.generation)
            condition.lock()
        }
    }

    /// Sends every batch still lingering and stops the thread; later batches are sent at once
    /// (``schedule(_:generation:)`` returns false). Idempotent.
    func stop() {
        condition.lock()
        isStopped = true
        condition.signal()
        condition.unlock()
        let onThread = thread.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        guard !onThread else { return }
        // Passed on, so that every later or concurrent `stop()` returns too.
        done.wait()
        done.signal()
    }
}
