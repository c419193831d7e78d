/// Order statistics of a set of samples (nearest-rank percentiles).
struct Summary {
    let median: Double
    let p10: Double
    let p90: Double
    let p99: Double
    let p999: Double
    let count: Int

    init(_ samples: [Double]) {
        precondition(!samples.isEmpty, "a summary needs at least one sample")
        let sorted = samples.sorted()
        func percentile(_ fraction: Double) -> Double {
            let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
            return sorted[min(max(rank, 0), sorted.count - 1)]
        }
        median = percentile(0.5)
        p10 = percentile(0.1)
        p90 = percentile(0.9)
        p99 = percentile(0.99)
        p999 = percentile(0.999)
        count = sorted.count
    }
}
