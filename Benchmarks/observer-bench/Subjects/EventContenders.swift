import ObserverSwift

/// The library's implementations as contenders, built the way a user
/// subscribes (`event.subscribe { ... }`, `event.subscribe(target) { ... }`).
extension Contender {
    static let eventClosureName = "ObserverSwift Event"
    static let eventTargetName = "ObserverSwift Event (weak target)"
    static let eventWeaklyReferencedTargetName = "ObserverSwift Event (weak target, also held by WEAK)"

    /// An `Event<Int>` with `count` closure subscriptions capturing `sink`.
    static func eventClosures(count: Int, sink: Sink) -> Contender {
        let event = Event<Int>()
        for _ in 0..<count { _ = event.subscribe { value in sink.total &+= value } }
        return Contender(
            implementation: eventClosureName, deliveriesPerSend: count,
            send: { sends in eventSend(event, sends: sends) },
            checksum: { sink.total },
            tearDown: { event.unsubscribeAll() })
    }

    /// An `Event<Int>` with one weak-target subscription per target.
    static func eventTargets(_ targets: [Target], implementation: String = eventTargetName) -> Contender {
        let event = Event<Int>()
        for target in targets {
            event.subscribe(target) { target, value in target.total &+= value }
        }
        return Contender(
            implementation: implementation, deliveriesPerSend: targets.count,
            send: { sends in eventSend(event, sends: sends) },
            checksum: { targetsTotal(targets) },
            tearDown: { event.unsubscribeAll() })
    }
}

@inline(never)
func eventSend(_ event: Event<Int>, sends: Int) {
    for value in stride(from: 1, through: sends, by: 1) {
        event.send(value)
    }
}
