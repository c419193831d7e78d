import ObserverSwift

/// SwiftEvents' `Observable<T>` and the minimal `Observable<T>(value:)`
/// recipe's class: ObserverSwift's ``ObservableValue``, under the name the
/// seeds' code uses, so that migrating is changing the import.
///
/// SwiftEvents' spellings (`Observable(value)`, `bind`, `unbind`,
/// `unbindAll`, `observersCount`, `<<<`) and the recipe's (`init(value:)`,
/// `addObserver(fireNow:_:)`, `removeObserver()`) are extensions of
/// ``ObservableValue``; ObserverSwift's own members (`subscribe`, `values`,
/// ...) come with them.
///
/// ```swift
/// import ObserverSwiftCompat
///
/// let title = Observable("Inbox")
/// let counter = Observable<Int>(value: 0)
/// title <<< "Archive"
/// print(title.value, counter.value, title.observersCount)   // Archive 0 0
/// ```
///
/// In a file that also imports Swift's `Observation` (as SwiftUI code does),
/// `Observable` names this class: write Swift's protocol as
/// `Observation.Observable`. The `@Observable` macro is not affected.
public typealias Observable<T> = ObservableValue<T>
