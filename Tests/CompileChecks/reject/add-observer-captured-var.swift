// expect-error: mutation of captured var 'latest' in concurrently-executing code
// ObservableValue observers run on the setting thread, which may be any thread.
import ObserverSwift

func watch(_ count: ObservableValue<Int>) -> Subscription {
    var latest = 0
    return count.subscribe { latest = $0 }
}
