struct SVGPlot {
    let results: BenchResults
    func render() -> String { "" }
}
