import Foundation
import ObserverSwift

extension Scenario {
    /// One post reaching N block observers of a private `NotificationCenter`
    /// (the value travels in `userInfo`, as it must), against `Event`.
    /// Target: ObserverSwift ≥ 10× faster.
    static let notificationCenterFanOut = Scenario(
        id: "notification-center", title: "NotificationCenter fan-out", presentation: .bars,
        defaultSizes: [1_000], quickSizes: [1_000]
    ) { context in
        var report = ScenarioReport()
        for size in context.sizes {
            let sink = Sink()
            report.figures += context.measure(
                size: size, metric: "ns/delivery",
                [
                    .raw(count: size, sink: sink),
                    .notificationCenter(count: size, sink: sink),
                    .eventClosures(count: size, sink: sink),
                ])
            report.setRatios(size: size, reference: "RAW")
            if let center = report.figure(Contender.notificationCenterName, size: size),
                let event = report.figure(Contender.eventClosureName, size: size)
            {
                let speedup = center.median / event.median
                report.verdicts.append(
                    Verdict(
                        scenario: context.scenario.id,
                        target: "≥ 10× faster than NotificationCenter (N=\(sizeLabel(size)))",
                        measured:
                            "\(formatFigure(speedup))× (\(formatFigure(center.median)) vs \(formatFigure(event.median)) ns/delivery)",
                        met: printedFigure(speedup) >= 10))
            }
        }
        return report
    }
}

extension Contender {
    static let notificationCenterName = "NotificationCenter"

    static func notificationCenter(count: Int, sink: Sink) -> Contender {
        let center = NotificationCenter()
        let name = Notification.Name("observer-bench.fan-out")
        let sendableSink = UncheckedSendableBox(sink)  // the block is @Sendable; one thread uses it here
        let observers = (0..<count).map { _ in
            center.addObserver(forName: name, object: nil, queue: nil) { note in
                sendableSink.value.total &+= note.userInfo?["value"] as? Int ?? 0
            }
        }
        return Contender(
            implementation: notificationCenterName, deliveriesPerSend: count,
            send: { sends in
                for value in stride(from: 1, through: sends, by: 1) {
                    center.post(name: name, object: nil, userInfo: ["value": value])
                }
            },
            checksum: { sink.total },
            tearDown: { for observer in observers { center.removeObserver(observer) } })
    }
}
