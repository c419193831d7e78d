import Dispatch
import Foundation
import ObserverSwift

/// The minimal `Observable<T>(value:)` recipe's spellings: `init(value:)`,
/// `addObserver(fireNow:_:)` and `removeObserver()`, with the recipe's
/// behaviour (one observer, called at once when added, then on the main
/// queue).
extension ObservableValue {
    /// The recipe's initializer: `Observable(value: 0)`.
    public convenience init(value: Value) {
        self.init(value)
    }
}

extension ObservableValue where Value: Equatable {
    /// `init(_:skipsDuplicates:)` with the recipe's `value:` label.
    public convenience init(value: Value, skipsDuplicates: Bool) {
        self.init(value, skipsDuplicates: skipsDuplicates)
    }
}

extension ObservableValue where Value: Sendable {
    /// Sets the value's one recipe observer, as the recipe's `addObserver`
    /// does.
    ///
    /// ```swift
    /// import ObserverSwiftCompat
    ///
    /// let title = Observable(value: "Inbox")
    /// title.addObserver { text in print("title:", text) }   // prints "title: Inbox" now
    /// title.value = "Archive"                               // "title: Archive", later, on the main queue
    /// title.removeObserver()
    /// ```
    ///
    /// - One observer: it replaces the observer an earlier `addObserver` on
    ///   this value set, and `nil` removes it. Subscriptions made with
    ///   `subscribe` or `bind` are separate and stay; `unbindAll()` and
    ///   `unsubscribeAll()` remove this observer too, and `observersCount`
    ///   counts it.
    /// - `fireNow` (the default): `onChange` is called with the current value
    ///   at once, on the calling thread, before `addObserver` returns.
    /// - Every later set calls it on the main queue, asynchronously (also
    ///   when the value is set on the main thread), in the order of the sets,
    ///   each with the value that set stored. (The recipe's queued block reads
    ///   `value` when it runs, so two quick sets call it twice with the latest.)
    /// - A call that was queued but has not started when the observer is
    ///   removed or replaced is dropped, as the recipe's queued block finds no
    ///   observer then (the recipe calls the replacing observer instead).
    /// - Any thread may call it: concurrent calls leave exactly one observer,
    ///   the last one's. A value set by another thread while `fireNow` runs
    ///   may reach the observer both ways (never neither).
    ///
    /// - Parameters:
    ///   - fireNow: call `onChange` with the current value before returning.
    ///   - onChange: the observer, or nil to remove it.
    public func addObserver(fireNow: Bool = true, _ onChange: (@Sendable (Value) -> Void)?) {
        RecipeObserver.replaceLock.lock()
        unsubscribe(RecipeObserver.marker)
        if let onChange {
            subscribeOnMainQueue(RecipeObserver.marker, onChange)
        }
        RecipeObserver.replaceLock.unlock()
        if fireNow, let onChange {
            onChange(value)
        }
    }

    /// Removes the observer `addObserver(fireNow:_:)` set, as the recipe's
    /// `removeObserver()` does; its calls queued on the main queue and not
    /// started are dropped. Without one it does nothing. Subscriptions made
    /// with `subscribe` or `bind` stay.
    public func removeObserver() {
        RecipeObserver.replaceLock.lock()
        unsubscribe(RecipeObserver.marker)
        RecipeObserver.replaceLock.unlock()
    }

    /// The recipe observer's delivery: on the main queue, every value once,
    /// in set order, dropped when removed before it runs.
    private func subscribeOnMainQueue(_ marker: RecipeObserver, _ onChange: @escaping @Sendable (Value) -> Void) {
        subscribe(marker, delivery: .queue(.main)) { _, value in onChange(value) }
    }
}

/// What tells a value's recipe observer from its other subscriptions: the
/// observer is subscribed with ``marker`` as its weakly held target, and
/// `unsubscribe(marker)` removes it. The marker lives as long as the process,
/// so the subscription never ends with its target.
final class RecipeObserver: Sendable {
    static let marker = RecipeObserver()

    /// Makes `addObserver`'s remove-then-subscribe one step, so that
    /// concurrent calls leave one observer. Recursive: removing an observer
    /// may release its closure, whose captures' deinit may add one again.
    static let replaceLock = NSRecursiveLock()

    private init() {}
}
