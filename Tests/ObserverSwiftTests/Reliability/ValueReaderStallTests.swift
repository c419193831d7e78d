import CObserverCore
import Dispatch
import Foundation
@_spi(EngineDiagnostics) import ObserverEngine
import XCTest

@_spi(EngineDiagnostics) @testable import ObserverSwift

/// A set of an ``ObservableValue`` never waits for a reader: not for one
/// descheduled while copying an inline copy (announced on it, as a reader
/// preempted by a higher-priority thread is), nor for one descheduled inside
/// the read section of a value published on the heap.
final class ValueReaderStallTests: XCTestCase {
    /// A value whose live instances are counted and whose reads are checked.
    final class Sample: Sendable {
        static let live = HeapAtomicWord<Int>(0)
        static var liveCount: Int { live.load(ordering: .sequentiallyConsistent) }

        let number: Int
        private let canary = HeapAtomicWord<UInt64>(0xA11C_E5A1_1AE5_0001)

        init(_ number: Int) {
            self.number = number
            Self.live.wrappingAdd(1, ordering: .sequentiallyConsistent)
        }

        deinit {
            canary.store(0xDEAD_DEAD_DEAD_DEAD, ordering: .sequentiallyConsistent)
            Self.live.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        }

        var isIntact: Bool { canary.load(ordering: .relaxed) == 0xA11C_E5A1_1AE5_0001 }
    }

    /// What a reader descheduled between announcing itself on `copy` and
    /// leaving looks like to the writer.
    static func park<Value>(_ value: ObservableValue<Value>, on copy: Int) {
        value.storage.readers.wrappingAdd(ValueStorage<Value>.readerUnit(of: copy), ordering: .sequentiallyConsistent)
    }

    static func unpark<Value>(_ value: ObservableValue<Value>, from copy: Int) {
        value.storage.readers.wrappingSubtract(
            ValueStorage<Value>.readerUnit(of: copy), ordering: .sequentiallyConsistent)
    }

    /// Waits (10 s at most) until `isReleased`: a thread's closure holds
    /// what it captures until Foundation releases the thread.
    static func waitUntilReleased(_ isReleased: () -> Bool) {
        let deadline = Date(timeIntervalSinceNow: 10)
        while !isReleased() && Date() < deadline { usleep(1_000) }
    }

    /// Runs `sets` on a thread of its own; returns how long they took, in
    /// milliseconds, or nil when they had not returned after `parkSeconds`
    /// (then `resume` runs, and the sets are awaited before returning).
    func timeSets(parkSeconds: Double, _ sets: @escaping @Sendable () -> Void, resume: () -> Void) -> Double? {
        let elapsed = Locked<Double?>(nil)
        let done = DispatchSemaphore(value: 0)
        let setter = Thread {
            let start = DispatchTime.now().uptimeNanoseconds
            sets()
            elapsed.withLock { $0 = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 }
            done.signal()
        }
        setter.start()
        let returned = done.wait(timeout: .now() + parkSeconds) == .success
        resume()
        if !returned {
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "the sets return once the reader resumes")
        }
        return returned ? elapsed.withLock { $0 } : nil
    }

    /// A reader parked for 500 ms on the inline copy the next set would
    /// overwrite: four sets from another thread return at once (well under
    /// 100 ms in total; they waited for the reader, 500 ms, before).
    func testSetsDoNotWaitForAReaderDescheduledMidRead() {
        let value = ObservableValue(1)
        let storage = value.storage
        let parked = 1 - storage.current.load(ordering: .relaxed)
        Self.park(value, on: parked)
        let sets: @Sendable () -> Void = { for next in 2...5 { value.value = next } }
        let elapsed = timeSets(parkSeconds: 0.5, sets, resume: { Self.unpark(value, from: parked) })
        XCTAssertNotNil(elapsed, "the four sets returned while the reader was parked")
        XCTAssertLessThan(elapsed ?? .infinity, 100, "milliseconds the four sets took")
        XCTAssertEqual(value.value, 5)
    }

    /// The same with both inline copies held by parked readers (the value is
    /// then published on the heap at every set), and a third reader parked
    /// inside the read section of a heap copy: the sets return at once, and
    /// once the readers leave, every replaced value is released.
    func testSetsDoNotWaitForReadersParkedOnEveryCopy() {
        let baseline = Sample.liveCount
        weak var released: ObservableValue<Sample>?
        do {
            let value = ObservableValue(Sample(0))
            released = value
            let storage = value.storage
            Self.park(value, on: 0)
            Self.park(value, on: 1)
            value.value = Sample(1)
            XCTAssertFalse(ValueStorage<Sample>.isInline(storage.current.load(ordering: .relaxed)))
            let inSection = DispatchSemaphore(value: 0)
            let leave = DispatchSemaphore(value: 0)
            let sectionReader = Thread {
                withReadSection {
                    XCTAssertEqual(value.value.number, 1)
                    inSection.signal()
                    _ = leave.wait(timeout: .now() + 10)
                }
            }
            sectionReader.start()
            XCTAssertEqual(inSection.wait(timeout: .now() + 10), .success)
            let sets: @Sendable () -> Void = { for next in 2...5 { value.value = Sample(next) } }
            let elapsed = timeSets(
                parkSeconds: 0.5, sets,
                resume: {
                    leave.signal()
                    Self.unpark(value, from: 0)
                    Self.unpark(value, from: 1)
                })
            XCTAssertNotNil(elapsed, "the four sets returned while the readers were parked")
            XCTAssertLessThan(elapsed ?? .infinity, 100, "milliseconds the four sets took")
            XCTAssertEqual(value.value.number, 5)
            value.value = Sample(6)
            XCTAssertTrue(ValueStorage<Sample>.isInline(storage.current.load(ordering: .relaxed)))
            XCTAssertEqual(value.value.number, 6)
        }
        Self.waitUntilReleased { released == nil }
        XCTAssertNoThrow(try ObserverCore.reclaimNow())
        XCTAssertEqual(Sample.liveCount, baseline, "every value released once the readers left")
    }

    /// Readers on two threads, a writer setting 1, 2, 3, … and a thread
    /// that parks and unparks readers on the inline copies, so sets go to
    /// the heap and back all the time: every read finds an intact value, no
    /// older than the one the same reader read before; nothing leaks. (Run
    /// under ThreadSanitizer and AddressSanitizer.)
    func testReadsStayCorrectWhileSetsMoveBetweenInlineAndHeapCopies() {
        let baseline = Sample.liveCount
        let sets = 20_000
        weak var released: ObservableValue<Sample>?
        do {
            let value = ObservableValue(Sample(0))
            released = value
            let stop = HeapAtomicWord<Bool>(false)
            let failures = HeapAtomicWord<Int>(0)
            let finished = DispatchGroup()
            for _ in 0..<2 {
                finished.enter()
                Thread {
                    var last = 0
                    while !stop.load(ordering: .relaxed) {
                        let read = value.value
                        if !read.isIntact || read.number < last { failures.wrappingAdd(1, ordering: .relaxed) }
                        last = read.number
                    }
                    finished.leave()
                }.start()
            }
            finished.enter()
            Thread {
                var generator = SplitMix64(seed: 26)
                while !stop.load(ordering: .relaxed) {
                    let copies = [[0], [1], [0, 1]][Int(generator.next() % 3)]
                    for copy in copies { Self.park(value, on: copy) }
                    usleep(UInt32(generator.next() % 50))
                    for copy in copies { Self.unpark(value, from: copy) }
                }
                finished.leave()
            }.start()
            var heapPublications = 0
            for next in 1...sets {
                value.value = Sample(next)
                if !ValueStorage<Sample>.isInline(value.storage.current.load(ordering: .relaxed)) {
                    heapPublications += 1
                }
            }
            XCTAssertGreaterThan(heapPublications, 0, "sets that published the value on the heap")
            stop.store(true, ordering: .relaxed)
            XCTAssertEqual(finished.wait(timeout: .now() + 30), .success)
            XCTAssertEqual(failures.load(ordering: .relaxed), 0, "reads that found a released or older value")
            XCTAssertEqual(value.value.number, sets)
        }
        Self.waitUntilReleased { released == nil }
        XCTAssertNoThrow(try ObserverCore.reclaimNow())
        XCTAssertEqual(Sample.liveCount, baseline, "every value released")
    }

    /// The memory a heap copy keeps for the core's retirement bookkeeping
    /// is as large as the core needs.
    func testRetirementRecordHoldsTheCoreBookkeeping() {
        XCTAssertGreaterThanOrEqual(MemoryLayout<RetirementRecord>.size, Int(OC_RETIREMENT_BYTES))
        XCTAssertGreaterThanOrEqual(MemoryLayout<RetirementRecord>.alignment, MemoryLayout<UnsafeRawPointer>.alignment)
    }
}
