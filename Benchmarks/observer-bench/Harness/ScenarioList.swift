/// Every scenario the harness knows, in the order they run. Only scenarios
/// whose implementation exists are listed.
///
/// To add one, write a `Scenario` value in `Scenarios/` and list it here.
/// A fan-out scenario is a few lines; for example the protocol-typed one
/// against CAST (`CastObservers`, already in `Baselines/`) would read:
///
/// ```swift
/// extension Scenario {
///     static let protocolFanOut = Scenario(
///         id: "protocol-fan-out", title: "protocol-typed fan-out (withObservers)", presentation: .bars,
///         defaultSizes: [1_000], quickSizes: [1_000]
///     ) { context in
///         var report = ScenarioReport()
///         for size in context.sizes {
///             let targets = (0..<size).map { _ in Target() }   // Target conforms to IntObserving
///             report.figures += context.measure(size: size, metric: "ns/delivery", [
///                 .raw(count: size, sink: Sink()),
///                 .cast(targets: targets),
///                 .protocolObservers(targets),   // a Contender built on the library's type
///             ])
///             report.setRatios(size: size, reference: "RAW")
///             // append a Verdict: CAST median / library median ≥ 5
///         }
///         return report
///     }
/// }
/// ```
///
/// A `Contender` is a name, the deliveries one send makes, a `send(k)` that
/// sends the values 1...k and a `checksum()` the observers add those values
/// to; the harness calibrates, warms up, interleaves, verifies and reports.
enum ScenarioList {
    static let all: [Scenario] = [
        .closureFanOut,
        .weakTargetFanOut,
        .protocolFanOut,
        .protocolAddRemove,
        .keyedSend,
        .keyedTwoSenders,
        .emptyAndOneSend,
        .observableValueSet,
        .batchSend,
        .subscribePair,
        .concurrentSenders,
        .latencyUnderChurn,
        .memoryPerObserver,
        .memoryPerSource,
        .shrinkMemory,
        .shrinkSend,
        .notificationCenterFanOut,
    ]

    static func named(_ id: String) -> Scenario? {
        all.first { $0.id == id }
    }
}
