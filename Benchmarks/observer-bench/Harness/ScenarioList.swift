/// Every scenario the harness knows, in the order they run. To add one,
/// write a `Scenario` value (see `Scenarios/`) and list it here; only list
/// scenarios whose implementation exists.
enum ScenarioList {
    static let all: [Scenario] = [
        .closureFanOut,
        .weakTargetFanOut,
        .emptyAndOneSend,
        .subscribePair,
        .concurrentSenders,
        .latencyUnderChurn,
        .memoryPerObserver,
        .notificationCenterFanOut,
    ]

    static func named(_ id: String) -> Scenario? {
        all.first { $0.id == id }
    }
}
