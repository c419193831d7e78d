import Dispatch
import Foundation
import ObserverEngine
import ObserverSwift

/// A thread that can be observed through protocols (Flowduino's
/// `ObservableThread`): subclass it, override ``main()``, loop while
/// ``isExecuting``, tell observers with
/// ``ProtocolObservable/withObservers(_:)`` and pause with
/// ``sleep(forTimeInterval:)``.
///
/// <!-- snippet: fragment of RandomNumberPrinter -->
/// ```swift
/// protocol RandomNumberObserver: AnyObject {
///     func onRandomNumber(_ randomNumber: Int)
/// }
/// class RandomNumberObservableThread: ObservableThread {
///     public override func main() {
///         while self.isExecuting {
///             let randomNumber = Int.random(in: -9000..<9001)
///             withObservers { (observer: RandomNumberObserver) in
///                 observer.onRandomNumber(randomNumber)
///             }
///             Self.sleep(forTimeInterval: 60.00)
///         }
///     }
/// }
/// let thread = RandomNumberObservableThread()
/// thread.addObserver(myObserver)     // held weakly
/// thread.start()
/// // ...
/// thread.cancel()                    // the loop ends, even mid-sleep
/// thread.join()                      // main() has returned
/// ```
///
/// Each instance owns one OS thread (a Foundation `Thread`, named after
/// ``name``), started by ``start()``, which runs ``main()`` once.
///
/// - ``isExecuting`` is true from ``start()`` until ``cancel()`` is called
///   or ``main()`` returns, so `while isExecuting` loops end on cancel.
/// - ``sleep(forTimeInterval:)`` called on the thread returns early when the
///   thread is cancelled or ``notifyChange()`` is called, so a loop that
///   sleeps for a minute still stops at once.
/// - ``waitUntilFinished(timeout:)`` / ``join()`` wait for ``main()`` to
///   return.
///
/// Observers are called where each one chose when added: on this thread
/// (the default, synchronously inside `withObservers`), on a queue
/// (`addObserver(_:queue:)`, `.queue(.main)` for the main queue), or on
/// its actor (an isolated conformance: `extension Screen: @MainActor P`).
///
/// This class wraps a `Thread` instead of subclassing it, so user
/// subclasses compile on Linux without importing CoreFoundation; inside
/// ``main()``, `Thread.current` is the owned thread, not `self` (use
/// ``current`` for the running `ObservableThread`).
open class ObservableThread: ProtocolObservable {
    // Not Sendable, so that user subclasses (which share their own state
    // between the thread and its creator) need not restate a conformance.
    // The lifecycle state is guarded by `condition`; the registry and the
    // event are Sendable.

    /// The registry holding this thread's observers.
    public let observerRegistry = ObserverRegistry()

    /// Sent (on the thread calling ``notifyChange()``) each time
    /// ``notifyChange()`` is called: the stand-in for Flowduino's
    /// `objectWillChange`, which has no Combine to live in on Linux.
    /// Subscribe with a `@MainActor` closure to update UI.
    public let changes = Event<Void>()

    private enum Phase { case idle, running, finished }

    private let condition = NSCondition()
    // Guarded by `condition`:
    private var phase = Phase.idle
    private var cancelled = false
    /// Set by notifyChange(), consumed by the next (or current) sleep.
    private var wakeupPending = false
    private var threadName: String?
    private var threadStackSize = 0
    private var threadQuality = QualityOfService.default

    /// Creates a thread that is not started yet. Not `required` (as in Flowduino): a
    /// subclass overrides it with `override init()` or declares its own.
    public init() {}

    // MARK: Lifecycle

    /// The thread's body, run once on the owned thread after ``start()``.
    /// Override it; the default does nothing.
    open func main() {}

    /// Starts the owned thread, which runs ``main()``. Calling it again
    /// (while running or after finishing) is a no-op. As with Foundation's
    /// `Thread`, a thread cancelled before it starts still runs ``main()``,
    /// with ``isExecuting`` already false.
    open func start() {
        condition.lock()
        guard phase == .idle else {
            condition.unlock()
            return
        }
        phase = .running
        let owner = UncheckedSendable(self)
        let thread = Thread { owner.wrapped.run() }
        thread.name = threadName
        if threadStackSize > 0 { thread.stackSize = threadStackSize }
        thread.qualityOfService = threadQuality
        condition.unlock()
        thread.start()
    }

    private func run() {
        let current = Thread.current
        current.threadDictionary[ObservableThread.currentKey] = UncheckedSendable(self)
        if let name = self.name { current.name = name }
        main()
        Thread.current.threadDictionary.removeObject(forKey: ObservableThread.currentKey)
        condition.lock()
        phase = .finished
        condition.broadcast()
        condition.unlock()
    }

    /// Asks ``main()`` to stop: ``isExecuting`` becomes false and a
    /// ``sleep(forTimeInterval:)`` in progress on the thread returns at
    /// once. Does not wait (see ``waitUntilFinished(timeout:)``);
    /// idempotent; any thread.
    open func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// True from ``start()`` until ``cancel()`` or the end of ``main()``:
    /// the condition of Flowduino's `while self.isExecuting` loop.
    public var isExecuting: Bool {
        condition.lock()
        defer { condition.unlock() }
        return phase == .running && !cancelled
    }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    /// Whether ``main()`` has returned.
    public var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return phase == .finished
    }

    /// Waits until ``main()`` has returned, at most `timeout` seconds
    /// (`nil`: no limit). Returns true when the thread is not running:
    /// finished, or never started. Returns false when the timeout expired,
    /// or at once when called on the thread itself (which would wait for
    /// itself forever).
    @discardableResult
    public func waitUntilFinished(timeout: TimeInterval? = nil) -> Bool {
        if ObservableThread.current === self { return false }
        let deadline = timeout.map { Date(timeIntervalSinceNow: $0) }
        condition.lock()
        defer { condition.unlock() }
        while phase == .running {
            if let deadline {
                if !condition.wait(until: deadline) { return phase != .running }
            } else {
                condition.wait()
            }
        }
        return true
    }

    /// Waits, without limit, until ``main()`` has returned. A no-op on the
    /// thread itself and for a thread never started.
    public func join() {
        waitUntilFinished(timeout: nil)
    }

    /// Signals that something changed: wakes the thread if it is in
    /// ``sleep(forTimeInterval:)``, or makes its next sleep return at once
    /// if it is busy (so its loop runs again now rather than after the
    /// pause; several notifications before that sleep count as one), then
    /// sends ``changes``. Any thread.
    public func notifyChange() {
        condition.lock()
        wakeupPending = true
        condition.broadcast()
        condition.unlock()
        changes.send(())
    }

    // MARK: Thread attributes

    /// The owned thread's name (shown by debuggers). Applies from the next
    /// ``start()``.
    public var name: String? {
        get { condition.withLock { threadName } }
        set { condition.withLock { threadName = newValue } }
    }

    /// The owned thread's stack size in bytes (0: the system default).
    /// Applies from the next ``start()``.
    public var stackSize: Int {
        get { condition.withLock { threadStackSize } }
        set { condition.withLock { threadStackSize = newValue } }
    }

    /// The owned thread's quality of service. Applies from the next
    /// ``start()``.
    public var qualityOfService: QualityOfService {
        get { condition.withLock { threadQuality } }
        set { condition.withLock { threadQuality = newValue } }
    }

    // MARK: Sleeping

    private static let currentKey = "ObserverSwift.ObservableThread.current"

    /// The `ObservableThread` whose ``main()`` is running on the calling
    /// thread, or nil.
    public static var current: ObservableThread? {
        (Thread.current.threadDictionary[currentKey] as? UncheckedSendable<ObservableThread>)?.wrapped
    }

    /// Pauses the calling thread for `interval` seconds. On an
    /// `ObservableThread` it returns early when that thread is cancelled
    /// (``cancel()``) or notified (``notifyChange()``, also when notified
    /// before this sleep started); elsewhere it is
    /// `Thread.sleep(forTimeInterval:)`.
    public static func sleep(forTimeInterval interval: TimeInterval) {
        sleep(until: Date(timeIntervalSinceNow: interval))
    }

    /// Pauses the calling thread until `date`; see
    /// ``sleep(forTimeInterval:)``.
    public static func sleep(until date: Date) {
        guard let thread = current else {
            Thread.sleep(until: date)
            return
        }
        thread.sleepUntilWoken(deadline: date)
    }

    private func sleepUntilWoken(deadline: Date) {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && !wakeupPending {
            if !condition.wait(until: deadline) { break }
        }
        wakeupPending = false
    }
}
