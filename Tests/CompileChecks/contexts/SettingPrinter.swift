// The observer the KeyedObservableClass example adds (its protocol is the
// example's own).
final class SettingPrinter: SettingObserver, Sendable {
    func settingChanged(key: String, oldValue: String, newValue: String) { print(key, oldValue, newValue) }
}
let someSettingObserver = SettingPrinter()
// fragment
