import ObserverEngine

/// Declares a property of a class observable by key path (there is no KVO
/// on Linux): `observe(\.$title) { old, new in }` on a
/// ``KeyPathObservable`` class.
///
/// ```swift
/// final class Document: KeyPathObservable {
///     @ObservableProperty var title = "Untitled"
///     @ObservableProperty var pageCount = 0
/// }
///
/// let document = Document()
/// let observer = document.observe(\.$title) { old, new in
///     print("title:", old, "→", new)
/// }
/// document.title = "Draft"        // prints "title: Untitled → Draft"
/// ```
///
/// Only for stored properties of classes (the wrapper reaches its storage
/// through the enclosing instance). Every write notifies, also when the
/// value does not change. The projected value `$title` is the property's
/// ``PropertyChanges``. Named so as not to clash with Swift's `Observation`
/// (`@Observable`, `@ObservationTracked`) or SwiftUI/Combine (`@Published`,
/// `@State`).
@propertyWrapper
public struct ObservableProperty<Value> {
    /// The value and observers; shared by every copy of the wrapper.
    public let projectedValue: PropertyChanges<Value>

    /// Wraps the property's initial value (what `@ObservableProperty var
    /// title = "Untitled"` calls).
    public init(wrappedValue: Value) {
        projectedValue = PropertyChanges(wrappedValue)
    }

    /// Not available: `@ObservableProperty` works in classes only.
    @available(*, unavailable, message: "@ObservableProperty can only be used on properties of classes")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        // swiftlint:disable:next unused_setter_value
        set { fatalError("unreachable") }
    }

    /// Reads and writes through the owning instance; a write notifies.
    @inlinable
    public static subscript<Owner: AnyObject>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Self>
    ) -> Value {
        get {
            owner[keyPath: storageKeyPath].projectedValue.value
        }
        set {
            owner[keyPath: storageKeyPath].projectedValue.value = newValue
        }
    }
}
