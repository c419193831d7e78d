import Foundation

/// The results as a hand-written SVG: ns per delivery against fan-out N on
/// log-log axes (one line per implementation, p10–p90 whiskers), then one
/// horizontal bar chart per other scenario (each on its own linear scale).
struct SVGPlot {
    let results: BenchResults

    private let width = 960.0
    private let palette = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
    ]

    func render() -> String {
        var body = ""
        var y = 20.0
        body += text(
            x: 20, y: y + 8, "observer-bench — \(results.date) — \(results.machine)\(results.quick ? " (quick)" : "")",
            size: 16, weight: "bold")
        y += 28
        let fanOut = results.scenarios.filter(\.plottedAsFanOut).flatMap(\.figures).filter { $0.size > 0 }
        if !fanOut.isEmpty {
            body += linePlot(fanOut, top: y, height: 420)
            y += 460
        }
        for scenario in results.scenarios where !scenario.plottedAsFanOut && !scenario.figures.isEmpty {
            let (svg, height) = barChart(scenario, top: y)
            body += svg
            y += height + 24
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(y))" viewBox="0 0 \(Int(width)) \(Int(y))" font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="white"/>
            \(body)</svg>

            """
    }

    // MARK: Fan-out lines

    private func linePlot(_ figures: [Figure], top: Double, height: Double) -> String {
        let left = 80.0
        let right = width - 300
        let bottom = top + height - 40
        // One line per implementation; an implementation measured in two
        // fan-out scenarios (RAW) is drawn from the first.
        var lines: [(name: String, points: [Figure])] = []
        for figure in figures {
            if let index = lines.firstIndex(where: { $0.name == figure.implementation }) {
                if lines[index].points.first?.scenario == figure.scenario { lines[index].points.append(figure) }
            } else {
                lines.append((figure.implementation, [figure]))
            }
        }
        let sizes = figures.map { Double($0.size) }
        let values = figures.flatMap { [$0.p10, $0.p90, $0.median] }.filter { $0 > 0 }
        let xMin = floor(log10(sizes.min()!))
        let xMax = max(ceil(log10(sizes.max()!)), xMin + 1)
        let yMin = floor(log10(values.min()!))
        let yMax = max(ceil(log10(values.max()!)), yMin + 1)
        func px(_ size: Double) -> Double { left + (log10(size) - xMin) / (xMax - xMin) * (right - left) }
        func py(_ value: Double) -> Double {
            bottom - (log10(max(value, 1e-9)) - yMin) / (yMax - yMin) * (bottom - top - 20)
        }

        var svg = text(
            x: left, y: top + 6, "ns per delivery against fan-out N (log-log; median, whiskers p10–p90)", size: 14,
            weight: "bold")
        for decade in stride(from: xMin, through: xMax, by: 1) {
            let x = px(pow(10, decade))
            svg += "<line x1=\"\(c(x))\" y1=\"\(c(top + 20))\" x2=\"\(c(x))\" y2=\"\(c(bottom))\" stroke=\"#ddd\"/>\n"
            svg += text(x: x, y: bottom + 18, sizeLabel(Int(pow(10, decade))), size: 12, anchor: "middle")
        }
        for decade in stride(from: yMin, through: yMax, by: 1) {
            let y = py(pow(10, decade))
            svg += "<line x1=\"\(c(left))\" y1=\"\(c(y))\" x2=\"\(c(right))\" y2=\"\(c(y))\" stroke=\"#ddd\"/>\n"
            let value = pow(10, decade)
            svg += text(
                x: left - 8, y: y + 4, value >= 1 ? "\(Int(value))" : formatFigure(value), size: 12, anchor: "end")
        }
        svg +=
            "<rect x=\"\(c(left))\" y=\"\(c(top + 20))\" width=\"\(c(right - left))\" height=\"\(c(bottom - top - 20))\" fill=\"none\" stroke=\"#333\"/>\n"
        svg += text(x: (left + right) / 2, y: bottom + 36, "observers (N)", size: 12, anchor: "middle")
        svg += text(
            x: 18, y: (top + bottom) / 2, "ns / delivery", size: 12, anchor: "middle",
            transform: "rotate(-90 18 \((top + bottom) / 2))")
        for (index, line) in lines.enumerated() {
            let color = palette[index % palette.count]
            let points = line.points.sorted { $0.size < $1.size }
            let path = points.map { "\(c(px(Double($0.size)))),\(c(py($0.median)))" }.joined(separator: " ")
            let dash =
                line.name.contains("weak") || line.name == "WEAK" || line.name == "CAST"
                ? " stroke-dasharray=\"6 3\"" : ""
            svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"\(dash)/>\n"
            for point in points {
                let x = px(Double(point.size))
                svg +=
                    "<line x1=\"\(c(x))\" y1=\"\(c(py(point.p10)))\" x2=\"\(c(x))\" y2=\"\(c(py(point.p90)))\" stroke=\"\(color)\" stroke-width=\"1\"/>\n"
                svg +=
                    "<circle cx=\"\(c(x))\" cy=\"\(c(py(point.median)))\" r=\"3\" fill=\"\(color)\"><title>\(escape(point.implementation)) N=\(point.size): \(formatFigure(point.median)) ns</title></circle>\n"
            }
            let legendY = top + 34 + Double(index) * 20
            svg +=
                "<line x1=\"\(c(right + 20))\" y1=\"\(c(legendY - 4))\" x2=\"\(c(right + 44))\" y2=\"\(c(legendY - 4))\" stroke=\"\(color)\" stroke-width=\"2\"\(dash)/>\n"
            svg += text(x: right + 50, y: legendY, line.name, size: 12)
        }
        return svg
    }

    // MARK: Bars

    private func barChart(_ scenario: BenchResults.ScenarioResult, top: Double) -> (String, Double) {
        let left = 380.0
        let right = width - 150
        let rowHeight = 20.0
        let metric = scenario.figures[0].metric
        let medians = scenario.figures.map(\.median).filter { $0 > 0 }
        let maximum = medians.max() ?? 1
        let minimum = medians.min() ?? 1
        // Figures spanning more than 50× get a log scale, or the small ones vanish.
        let logarithmic = maximum / minimum > 50
        let floor = minimum / 2
        func length(_ value: Double) -> Double {
            guard value > 0, maximum > 0 else { return 0 }
            let fraction = logarithmic ? log10(value / floor) / log10(maximum / floor) : value / maximum
            return fraction * (right - left)
        }
        var svg = text(
            x: 20, y: top + 14, "\(scenario.title) (\(metric)\(logarithmic ? ", log scale" : ""))", size: 14,
            weight: "bold")
        for (index, figure) in scenario.figures.enumerated() {
            let y = top + 24 + Double(index) * rowHeight
            let length = length(figure.median)
            let color =
                figure.implementation.hasPrefix("ObserverSwift")
                ? palette[0] : (figure.implementation.hasPrefix("RAW") ? "#999" : palette[1])
            svg += text(
                x: left - 8, y: y + 13, "N=\(sizeLabel(figure.size)) · \(figure.implementation)", size: 12,
                anchor: "end")
            svg +=
                "<rect x=\"\(c(left))\" y=\"\(c(y + 2))\" width=\"\(c(max(length, 1)))\" height=\"\(c(rowHeight - 6))\" fill=\"\(color)\"/>\n"
            var label = formatFigure(figure.median)
            if let p999 = figure.p999 { label = "p50 \(label), p99.9 \(formatFigure(p999))" }
            if let ratio = figure.ratioToRaw, !figure.isRawReference { label += "  (\(formatFigure(ratio))× RAW)" }
            svg += text(x: left + max(length, 1) + 6, y: y + 13, label, size: 12)
        }
        return (svg, 24 + Double(scenario.figures.count) * rowHeight)
    }

    // MARK: Text

    /// A coordinate with one decimal.
    private func c(_ value: Double) -> String {
        formatFixed(value, digits: 1)
    }

    private func text(
        x: Double, y: Double, _ content: String, size: Int, anchor: String = "start",
        weight: String = "normal", transform: String? = nil
    ) -> String {
        let transformAttribute = transform.map { " transform=\"\($0)\"" } ?? ""
        return
            "<text x=\"\(c(x))\" y=\"\(c(y))\" font-size=\"\(size)\" text-anchor=\"\(anchor)\" font-weight=\"\(weight)\"\(transformAttribute)>\(escape(content))</text>\n"
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
