import Foundation
import ObserverNATS
import ObserverSwift
import ObserverTestSupport
import XCTest

/// ObservableValue mirrored through a JetStream key-value bucket.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSValueMirrorTests: XCTestCase {
    func uniqueKey(_ name: String = #function) -> String {
        "\(name.filter { $0.isLetter })\(UInt32.random(in: 0 ... .max))"
    }

    func testLateJoinerStartsFromTheCurrentValueAndChangesPropagateBothWaysWithoutEcho() throws {
        let (first, second) = try makeBridgePair()
        let key = uniqueKey()
        let here = ObservableValue(10)
        let hereMirror = try first.mirror(here, bucket: "observer-tests", key: key)
        XCTAssertEqual(hereMirror.publishedCount, 1, "an empty key gets the local value")
        here.value = 11

        // A late joiner starts from the bucket's value before `mirror` returns.
        XCTAssertTrue(waitUntil { hereMirror.publishedCount == 2 })
        XCTAssertEqual(first.flush(timeout: .seconds(10)), 0, "the bucket stored 11")
        let there = ObservableValue(0)
        let seenThere = Received<Int>()
        let token = there.subscribe { seenThere.append($0) }
        defer { token.cancel() }
        let thereMirror = try second.mirror(there, bucket: "observer-tests", key: key)
        XCTAssertEqual(there.value, 11)
        XCTAssertEqual(thereMirror.publishedCount, 0, "the joiner does not write what it read")

        // Both ways.
        there.value = 12
        XCTAssertTrue(waitUntil { here.value == 12 })
        here.value = 13
        XCTAssertTrue(waitUntil { there.value == 13 })

        // No echo: each change was written once, by the side that made it, and applied once elsewhere.
        usleep(300_000)
        XCTAssertEqual(hereMirror.publishedCount, 3)  // 10, 11, 13
        XCTAssertEqual(thereMirror.publishedCount, 1)  // 12
        XCTAssertEqual(hereMirror.appliedCount, 1)  // 12
        XCTAssertEqual(thereMirror.appliedCount, 2)  // 11 (initial), 13
        XCTAssertEqual(seenThere.values, [11, 12, 13])
        XCTAssertEqual(hereMirror.malformedCount, 0)
    }

    func testConcurrentWritersEndOnTheSameValue() throws {
        let (first, second) = try makeBridgePair()
        let key = uniqueKey()
        let a = ObservableValue(0)
        let b = ObservableValue(0)
        let mirrorA = try first.mirror(a, bucket: "observer-tests", key: key)
        let mirrorB = try second.mirror(b, bucket: "observer-tests", key: key)
        let writerA = Thread { for value in 1...200 { a.value = value } }
        let writerB = Thread { for value in 1001...1200 { b.value = value } }
        writerA.start()
        writerB.start()
        XCTAssertTrue(waitUntil { writerA.isFinished && writerB.isFinished })
        // Every write stored, so the bucket's last revision is final; a mirror made now
        // starts from it. (The two values may agree for a moment on another one while
        // entries are still arriving: agreement alone is not the end.)
        XCTAssertEqual(first.flush(timeout: .seconds(10)), 0)
        XCTAssertEqual(second.flush(timeout: .seconds(10)), 0)
        let last = ObservableValue(-1)
        let lastMirror = try first.mirror(last, bucket: "observer-tests", key: key)
        lastMirror.cancel()
        let lastRevision = lastMirror.revision
        XCTAssertGreaterThan(lastRevision, 0)
        XCTAssertTrue(
            waitUntil(timeout: 15) { mirrorA.revision >= lastRevision && mirrorB.revision >= lastRevision },
            "the mirrors took in revisions \(mirrorA.revision) and \(mirrorB.revision) of \(lastRevision)")
        XCTAssertTrue([200, 1200].contains(last.value), "the bucket's last value \(last.value) is one writer's last")
        XCTAssertEqual(a.value, last.value, "a ends on the bucket's last value")
        XCTAssertEqual(b.value, last.value, "b ends on the bucket's last value")
        // And they stay there: neither changes within 300 ms.
        let changes = Received<Int>()
        let tokens = [a, b].map { value in value.subscribe { changes.append($0) } }
        defer { tokens.forEach { $0.cancel() } }
        XCTAssertFalse(changes.wait(forCount: 1, timeout: 0.3), "changed after they agreed: \(changes.values)")
    }

    /// The watcher takes another writer's entry while a local set's round is
    /// still running (a slow handler of the value, registered before the
    /// mirror's): the local set is written after the other writer's entry, so
    /// the bucket ends on the local value, and so must both mirrors, although
    /// the other value is set locally after the local one.
    func testALocalSetWhoseRoundOverlapsAnIncomingEntryIsAppliedAgainWhenItComesBack() throws {
        let (first, second) = try makeBridgePair()
        let key = uniqueKey()
        let a = ObservableValue(0)
        let b = ObservableValue(0)
        let seenA = Received<Int>()
        // Runs before the mirror's own observer of `a` in each round of `a`.
        let slowHandler = a.subscribe { value in
            seenA.append(value)
            // Only in the round of the local set (the first), not when 1 comes back from the bucket.
            guard value == 1, seenA.values.count == 1 else { return }
            b.value = 2
            // Long enough for `a`'s watcher to take 2 and wait for this round.
            usleep(500_000)
        }
        defer { slowHandler.cancel() }
        let mirrorA = try first.mirror(a, bucket: "observer-tests", key: key)
        let mirrorB = try second.mirror(b, bucket: "observer-tests", key: key)
        a.value = 1
        XCTAssertTrue(waitUntil { mirrorA.publishedCount == 2 && mirrorB.publishedCount == 1 })
        XCTAssertTrue(waitUntil(timeout: 5) { a.value == 1 && b.value == 1 }, "a \(a.value) b \(b.value)")
        // And they stay there: neither changes within 300 ms.
        let changes = Received<Int>()
        let tokens = [a, b].map { value in value.subscribe { changes.append($0) } }
        defer { tokens.forEach { $0.cancel() } }
        XCTAssertFalse(changes.wait(forCount: 1, timeout: 0.3), "changed after they agreed: \(changes.values)")
        XCTAssertEqual(a.value, 1, "the bucket's last revision is a's 1")
        XCTAssertEqual(b.value, 1)
        XCTAssertEqual(seenA.values, [1, 2, 1], "2 arrived during 1's round; 1 is applied again after it")
    }

    func testCancelStopsBothDirectionsAndBadNamesAreRejected() throws {
        let (first, second) = try makeBridgePair()
        let key = uniqueKey()
        let a = ObservableValue("start")
        let b = ObservableValue("")
        let mirrorA = try first.mirror(a, bucket: "observer-tests", key: key)
        try second.mirror(b, bucket: "observer-tests", key: key)
        XCTAssertEqual(b.value, "start")
        mirrorA.cancel()
        let changesOfA = Received<String>()
        let token = a.subscribe { changesOfA.append($0) }
        defer { token.cancel() }
        a.value = "not written"
        b.value = "not applied"
        // b's value reaches the bucket; nothing takes it to a within 300 ms.
        XCTAssertEqual(second.flush(timeout: .seconds(10)), 0)
        XCTAssertFalse(
            changesOfA.wait(forCount: 2, timeout: 0.3), "a changed after its mirror's cancel: \(changesOfA.values)")
        XCTAssertEqual(a.value, "not written")
        XCTAssertEqual(mirrorA.publishedCount, 1)
        XCTAssertThrowsError(try first.mirror(a, bucket: "bad bucket", key: "k")) {
            XCTAssertEqual(($0 as? NATSError)?.kind, .invalidSubject)
        }
        XCTAssertThrowsError(try first.mirror(a, bucket: "observer-tests", key: "a.*")) {
            XCTAssertEqual(($0 as? NATSError)?.kind, .invalidSubject)
        }
    }

    func testAValueFromTheBucketCanBeForwardedThroughAnExportedEvent() throws {
        let (first, second) = try makeBridgePair()
        let key = uniqueKey()
        let subject = NATSTestEnvironment.uniqueSubject()
        let source = ObservableValue(1)
        try first.mirror(source, bucket: "observer-tests", key: key)
        // On the second side the mirrored value is forwarded to an exported event from its observer,
        // which runs on the mirror's watcher thread: it is not an echo of an import, so it is published.
        let copy = ObservableValue(0)
        let forwarded = Event<Int>()
        try second.export(forwarded, to: subject)
        let token = copy.subscribe { forwarded.send($0) }
        defer { token.cancel() }
        let listened = Event<Int>()
        let heard = Received<Int>()
        let listener = listened.subscribe { heard.append($0) }
        defer { listener.cancel() }
        try first.import(subject, into: listened)
        try second.mirror(copy, bucket: "observer-tests", key: key)
        source.value = 2
        XCTAssertTrue(waitUntil { heard.values.contains(2) })
        XCTAssertEqual(heard.values.filter { $0 == 2 }.count, 1)
    }
}
