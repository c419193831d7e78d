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
    }
}

/// Runs the main run loop until `condition` holds or 5 seconds pass.
public func runMainLoop(until condition: () -> Bool) {
    let deadline = Date().addingTimeInterval(5)
    while !condition() && Date() < deadline {
        RunLoop.main.run(until: Date().addingTimeInterval(0.01))
    }
}
