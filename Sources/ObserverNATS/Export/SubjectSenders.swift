import CNATS
import Foundation
import ObserverSwift

/// The at-most-once publishers of one subject on one connection, and, once there are several, the
/// order in which their messages went out: the server's denial of a publish names only the subject,
/// and the server answers a connection's messages in the order it received them, so the oldest
/// message of the subject not yet answered is the one denied.
///
/// With one publisher, nothing is recorded: a publish costs two atomic additions (`gate`). When a
/// second publisher joins, publishing goes through `lock`, which records each message sent; the
/// messages the first publisher sent alone are charged to it until the server has answered them
/// (a flush of the connection, then a marker on cnats' callback thread behind their denials).
/// What the server let through is forgotten the same way, whenever more than `pruneThreshold` runs
/// of messages are recorded: memory stays bounded by what is in flight.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class SubjectSenders: @unchecked Sendable {
    // @unchecked: `state` is only touched under `lock`; `gate` is atomic; `denials` is immutable.
    private struct Run {
        let publisher: ExportedPublisher
        var count: Int
    }

    private struct State {
        var publishers: [ExportedPublisher] = []
        var isShared = false
        /// The publisher that published alone before another joined, until the server has
        /// answered what it sent alone.
        var publishedAlone: ExportedPublisher?
        /// Messages sent since sharing, oldest first, from `head` on.
        var runs: [Run] = []
        var head = 0
        /// The position (in messages sent since sharing) of the first message of `runs[head]`, and
        /// of the next message.
        var firstPosition = 0
        var endPosition = 0
        var isPruning = false
        /// Whether `maximumRecordedRuns` was reached (reported once).
        var hasOverflowed = false
    }

    /// Unshared: the count of publishes under way. Shared: that count plus `sharedMark`.
    private let gate = HeapAtomicWord<Int>(0)
    private static let sharedMark = 1 << 40
    static let pruneThreshold = 64
    /// The most runs recorded at once (24 bytes each), reached only while cnats' callback thread
    /// is held up (a `status` observer that blocks): the server's answers are then not taken in.
    static let maximumRecordedRuns = 1 << 16
    /// Taken after `PermissionDenials`' table lock (never before it) and before its markers' lock.
    private let lock = NSLock()
    private var state = State()
    private unowned let denials: PermissionDenials

    init(denials: PermissionDenials) {
        self.denials = denials
    }

    /// Sends one message of `publisher` with `send` (cnats' publish), recording it when shared.
    func publish(_ publisher: ExportedPublisher, _ send: () -> natsStatus) -> natsStatus {
        if gate.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue < Self.sharedMark {
            let result = send()
            gate.wrappingSubtract(1, ordering: .sequentiallyConsistent)
            return result
        }
        gate.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        lock.lock()
        let result = send()
        var prune = false
        var overflowed = false
        if result == NATS_OK {
            if state.runs.count > state.head, state.runs[state.runs.count - 1].publisher === publisher {
                state.runs[state.runs.count - 1].count += 1
            } else if state.runs.count - state.head >= Self.maximumRecordedRuns {
                // The server's answers are not being taken in (cnats' callback thread is held up):
                // memory stays bounded, and the denials of these messages go to the last sender.
                state.runs[state.runs.count - 1].count += 1
                overflowed = !state.hasOverflowed
                state.hasOverflowed = true
            } else {
                state.runs.append(Run(publisher: publisher, count: 1))
            }
            state.endPosition += 1
            if !state.isPruning, state.runs.count - state.head > Self.pruneThreshold || state.publishedAlone != nil {
                state.isPruning = true
                prune = true
            }
        }
        lock.unlock()
        if prune { requestPrune(publisher.connection) }
        if overflowed {
            publisher.status.send(
                .error(
                    "\(Self.maximumRecordedRuns) runs of messages to \(publisher.subject) from several exports are "
                        + "unanswered: until the server's answers are taken in, a denial of a later one may be "
                        + "charged to another export of the subject"))
        }
        return result
    }

    /// Adds `publisher`; from the second on, records the order of messages (see the type's comment).
    func add(_ publisher: ExportedPublisher) {
        lock.lock()
        defer { lock.unlock() }
        state.publishers.append(publisher)
        // Without markers, nothing recorded could be forgotten: denials then go to the first.
        guard state.publishers.count == 2, !state.isShared, PermissionDenials.canQueueMarkers else { return }
        state.isShared = true
        gate.wrappingAdd(Self.sharedMark, ordering: .sequentiallyConsistent)
        // Publishes that started unshared finish first: each is then before the flush below.
        while gate.load(ordering: .sequentiallyConsistent) != Self.sharedMark { sched_yield() }
        state.publishedAlone = state.publishers[0]
        // Publishing waits for this lock: what the first publisher sent alone is before the flush's
        // PING, and its denials before the marker, which nothing published since can precede.
        let connection = publisher.connection
        if natsConnection_FlushTimeout(connection.pointer, 2000) == NATS_OK,
            denials.postMarker(connection.pointer, then: { [self] in answered(upTo: 0) }) != nil
        {
            state.isPruning = true
        }
        // Otherwise (disconnected) the next publish asks again.
    }

    /// Takes `publisher` out; returns whether no publisher is left. While others are left, its
    /// recorded messages stay, so that denials of them still reach it; with the last, the record
    /// goes (a publisher refers to this object: nothing here may keep one alive after that).
    func remove(_ publisher: ExportedPublisher) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        state.publishers.removeAll { $0 === publisher }
        guard state.publishers.isEmpty else { return false }
        state.runs = []
        state.head = 0
        state.firstPosition = state.endPosition
        state.publishedAlone = nil
        return true
    }

    /// How many runs of messages are recorded now (for tests).
    var recordedRunCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return state.runs.count - state.head
    }

    var publisherCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return state.publishers.count
    }

    /// The publisher of the oldest message the server has not answered, for a denial of the subject;
    /// nil when no message is waiting for an answer.
    func takeDenied() -> ExportedPublisher? {
        lock.lock()
        defer { lock.unlock() }
        if !state.isShared { return state.publishers.first }
        if let alone = state.publishedAlone { return alone }
        guard state.head < state.runs.count else { return nil }
        let publisher = state.runs[state.head].publisher
        dropFirst(1)
        return publisher
    }

    /// Flushes the connection (the server has then answered everything sent before) and queues a
    /// marker behind the denials of it: when the marker is seen, what was not denied was let through.
    private func requestPrune(_ connection: NATSConnection) {
        let cut = { () -> Int in
            lock.lock()
            defer { lock.unlock() }
            return state.endPosition
        }()
        Self.pruning.async { [self] in
            let posted =
                natsConnection_FlushTimeout(connection.pointer, 2000) == NATS_OK
                && denials.postMarker(connection.pointer, then: { [self] in answered(upTo: cut) }) != nil
            if !posted {
                lock.lock()
                state.isPruning = false
                lock.unlock()
            }
        }
    }

    private static let pruning = DispatchQueue(label: "ObserverNATS.denial-order")

    /// The server has answered every message before `position` (and what was sent alone).
    /// Asks again when more than `pruneThreshold` runs are still recorded, so that memory shrinks
    /// also once nothing more is published.
    private func answered(upTo position: Int) {
        lock.lock()
        state.publishedAlone = nil
        if position > state.firstPosition { dropFirst(position - state.firstPosition) }
        let again = state.runs.count - state.head > Self.pruneThreshold ? state.runs.last?.publisher.connection : nil
        state.isPruning = again != nil
        lock.unlock()
        if let again { requestPrune(again) }
    }

    /// Forgets the `count` oldest recorded messages (fewer when fewer are recorded).
    private func dropFirst(_ count: Int) {
        var left = count
        while left > 0, state.head < state.runs.count {
            let taken = min(left, state.runs[state.head].count)
            state.runs[state.head].count -= taken
            state.firstPosition += taken
            left -= taken
            if state.runs[state.head].count == 0 { state.head += 1 }
        }
        if state.head > 32, state.head * 2 > state.runs.count {
            state.runs.removeFirst(state.head)
            state.head = 0
        }
    }
}
