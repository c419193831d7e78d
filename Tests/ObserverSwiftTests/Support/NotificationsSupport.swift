import Foundation

import ObserverEngine
@testable import ObserverSwift

/// Helpers for the notification and key-path tests (prefixed to avoid
/// clashing with other areas' helpers).
enum NotificationsSupport {
    /// A thread-safe list of recorded values.
    final class Recorder<Value: Sendable>: Sendable {
        private let values = Locked<[Value]>([])
        func append(_ value: Value) { values.withLock { $0.append(value) } }
        var all: [Value] { values.withLock { $0 } }
        var count: Int { values.withLock { $0.count } }
    }

    /// Runs the main run loop until `condition` holds or `seconds` pass
    /// (a deadline against hangs, not a timing assertion). Main thread only.
    static func spinMainRunLoop(upTo seconds: Double = 10, until condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() && Date() < deadline {
            _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.01))
        }
    }

    /// Runs `body` on a new thread and waits for it to finish.
    static func onNewThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        thread.start()
        done.wait()
    }

    /// A unique notification name per call.
    static func uniqueName(_ function: String = #function) -> Notification.Name {
        Notification.Name("ObserverSwiftTests.\(function).\(UUID().uuidString)")
    }

    /// Some object to observe, own or be captured.
    final class Thing: HasObservers, @unchecked Sendable {}
}
