// `for await` over `values` compiles in a task, in Swift 6 mode.
import ObserverSwift

func firstThree(of event: Event<Int>) async -> [Int] {
    var seen: [Int] = []
    for await value in event.values {
        seen.append(value)
        if seen.count == 3 { break }
    }
    return seen
}

func latest(of count: ObservableValue<Int>) async -> Int? {
    for await value in count.values { return value }
    return nil
}
