import Foundation

/// An OS thread running `body`, started at once; ``join()`` waits for it to
/// finish.
public final class JoinableThread: @unchecked Sendable {
    // @unchecked: `finished` is a semaphore; `body` runs once on the thread.
    private let finished = DispatchSemaphore(value: 0)

    public init(_ body: @escaping @Sendable () -> Void) {
        let finished = finished
        let thread = Thread {
            body()
            finished.signal()
        }
        thread.start()
    }

    public func join() {
        finished.wait()
        finished.signal()
    }

    /// Waits up to `timeout` seconds for the thread to finish; returns
    /// whether it did. `XCTAssertFalse` of it states that `body` is still
    /// running after that window.
    public func join(timeout: TimeInterval) -> Bool {
        guard finished.wait(timeout: .now() + timeout) == .success else { return false }
        finished.signal()
        return true
    }
}

/// Runs `body` on `count` new threads at once and waits for all of them.
public func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let threads = (0..<count).map { index in JoinableThread { body(index) } }
    for thread in threads { thread.join() }
}

/// Hands a value to another thread whose use of it the test controls.
public final class UncheckedBox<Value>: @unchecked Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
}

/// Runs the main run loop until `condition` holds or 5 seconds pass.
public func runMainLoop(until condition: () -> Bool) {
    let deadline = Date().addingTimeInterval(5)
    while !condition() && Date() < deadline {
        RunLoop.main.run(until: Date().addingTimeInterval(0.01))
    }
}
