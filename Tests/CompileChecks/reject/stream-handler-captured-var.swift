// expect-error: mutation of captured var 'sum' in concurrently-executing code
// A producer calls its observers on whatever thread it produces on.
import ObserverSwiftCompat

func total(_ stream: ValueObservable<Int>) -> Subscription {
    var sum = 0
    return stream.subscribe { sum += $0 }
}
