import Foundation
import ObserverSwiftCompat

// The minimal `Observable<T>` recipe, as blog posts write it.
final class LoginViewModel {
    let username = ObservableValue<String>(value: "")
}

var failures = 0

func check(_ condition: Bool, _ what: String) {
    print(condition ? "ok   " : "FAIL ", what)
    if !condition { failures += 1 }
}

func recipeFlows() {
    let viewModel = LoginViewModel()
    var shown: [String] = []
    let token = viewModel.username.addObserver { value in
        shown.append(value)
    }
    viewModel.username.value = "ada"
    viewModel.username.removeObserver(token)
    viewModel.username.value = "grace"
    check(shown == ["ada"], "minimal Observable<T> recipe")
}

swiftEventsFlows()
flowduinoFlows()
indefiniteObservableFlows()
hsObserverFlows()
recipeFlows()
if failures > 0 {
    print("seed-flows: \(failures) failed")
    exit(1)
}
print("seed-flows: every seed README flow compiled in Swift 5 mode and ran")
