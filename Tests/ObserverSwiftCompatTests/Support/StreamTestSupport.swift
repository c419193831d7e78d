// The same helpers as ObserverSwiftTests/Support/ValueStreamTestSupport.swift
// (test targets cannot share sources).
import Foundation

/// A thread-safe list of received values (for the value and stream tests).
final class ValueTestRecorder<Element>: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var storage: [Element] = []

    func append(_ element: Element) {
        lock.lock()
        storage.append(element)
        lock.unlock()
    }

    var values: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    var count: Int { values.count }
}

/// A thread-safe counter.
final class ValueTestCounter: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var storage = 0

    func increment() {
        lock.lock()
        storage += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}

/// An OS thread running `body`; `join()` waits for it to finish.
final class ValueTestThread: @unchecked Sendable {
    // @unchecked: `finished` is a semaphore; `body` runs once on the thread.
    private let finished = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> Void) {
        let finished = finished
        let thread = Thread {
            body()
            finished.signal()
        }
        thread.start()
    }

    func join() {
        finished.wait()
    }
}

/// Runs the main run loop until `condition` holds or 5 seconds pass.
func runMainLoop(until condition: () -> Bool) {
    let deadline = Date().addingTimeInterval(5)
    while !condition() && Date() < deadline {
        RunLoop.main.run(until: Date().addingTimeInterval(0.01))
    }
}
