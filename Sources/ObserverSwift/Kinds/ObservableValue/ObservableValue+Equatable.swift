extension ObservableValue where Value: Equatable {
    /// Creates an observable value that, when `skipsDuplicates` is true, does
    /// not notify (nor count a trigger) when a set value equals the current
    /// one.
    ///
    /// ```swift
    /// let mode = ObservableValue("light", skipsDuplicates: true)
    /// mode.addObserver { print("mode:", $0) }
    /// mode.value = "light"   // nothing: unchanged
    /// mode.value = "dark"    // prints "mode: dark"
    /// ```
    public convenience init(_ value: Value, skipsDuplicates: Bool) {
        self.init(value: value, skipsDuplicates: skipsDuplicates)
    }

    /// The minimal recipe's spelling of ``init(_:skipsDuplicates:)``.
    public convenience init(value: Value, skipsDuplicates: Bool) {
        if skipsDuplicates {
            self.init(value: value, isDuplicate: ==)
        } else {
            self.init(value: value)
        }
    }
}
