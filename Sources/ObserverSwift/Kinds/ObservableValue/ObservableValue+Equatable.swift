import ObserverEngine

extension ObservableValue where Value: Equatable {
    /// Creates an observable value that, when `skipsDuplicates` is true, does
    /// not notify (nor count a trigger) when a set value equals the current
    /// one.
    ///
    /// ```swift
    /// let mode = ObservableValue("light", skipsDuplicates: true)
    /// let token = mode.subscribe { print("mode:", $0) }
    /// mode.value = "light"   // nothing: unchanged
    /// mode.value = "dark"    // prints "mode: dark"
    /// token.cancel()
    /// ```
    public convenience init(_ value: Value, skipsDuplicates: Bool) {
        if skipsDuplicates {
            self.init(value: value, isDuplicate: ==)
        } else {
            self.init(value)
        }
    }
}
