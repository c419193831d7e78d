import Foundation
import ObserverSwiftCompat

var failures = 0

func check(_ condition: Bool, _ what: String) {
    print(condition ? "ok   " : "FAIL ", what)
    if !condition { failures += 1 }
}

swiftEventsFlows()
flowduinoFlows()
indefiniteObservableFlows()
hsObserverFlows()
observableRecipeFlows()
if failures > 0 {
    print("seed-flows: \(failures) failed")
    exit(1)
}
print("seed-flows: every seed README flow compiled in Swift 5 mode and ran")
