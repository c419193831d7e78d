import Foundation

/// A thread-safe list of received values, appended to by handlers on any
/// thread and read by the test. Every access takes a lock, so a reader sees
/// every append that returned before it; each append wakes the threads
/// waiting in ``wait(timeout:until:)``.
public final class Received<Element: Sendable>: @unchecked Sendable {
    // @unchecked: `storage` is only touched while `condition` is locked.
    private let condition = NSCondition()
    private var storage: [Element] = []

    public init() {}

    public func append(_ element: Element) {
        condition.lock()
        storage.append(element)
        condition.broadcast()
        condition.unlock()
    }

    public var values: [Element] {
        condition.lock()
        defer { condition.unlock() }
        return storage
    }

    public var count: Int { values.count }

    /// Waits until `predicate` holds for the values received so far, checking
    /// it now and after each append (not on a timer), for `timeout` seconds at
    /// most; returns whether it held. `XCTAssertFalse` of a wait states that
    /// nothing making `predicate` true arrives within that window.
    @discardableResult
    public func wait(timeout: TimeInterval, until predicate: ([Element]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(storage) {
            guard condition.wait(until: deadline) else { return predicate(storage) }
        }
        return true
    }

    /// Waits until at least `count` values have arrived, for `timeout`
    /// seconds at most; returns whether they did.
    @discardableResult
    public func wait(forCount count: Int, timeout: TimeInterval) -> Bool {
        wait(timeout: timeout) { $0.count >= count }
    }
}
