// expect-error: mutation of captured var 'waves' in concurrently-executing code
// A notification block runs on the posting thread or the observer's queue.
import Foundation
import ObserverSwift

func watchWaves() -> NotificationObserver {
    var waves = 0
    return NotificationObserver(forName: Notification.Name("wave"), queue: nil, activate: true) { _ in
        waves += 1
    }
}
