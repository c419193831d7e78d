/// Sets a new value: `observable <<< value` (SwiftEvents' operator).
/// Assignment precedence, so `count <<< count.value + 1` needs no parentheses.
infix operator <<< : AssignmentPrecedence

/// Sets `observable.value` to `value`, notifying its observers.
///
/// ```swift
/// let score = ObservableValue(0)
/// score <<< 5          // score.value == 5
/// ```
@inlinable
public func <<< <Value>(observable: ObservableValue<Value>, value: @autoclosure () -> Value) {
    observable.value = value()
}
