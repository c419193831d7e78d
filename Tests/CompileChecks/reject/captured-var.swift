// expect-error: mutation of captured var 'count' in concurrently-executing code
// A handler mutating a captured local variable.
import ObserverSwift

func countSends(_ event: Event<Int>) -> Subscription {
    var count = 0
    let token = event.subscribe { _ in count += 1 }
    return token
}
