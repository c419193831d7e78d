// The timer a value stream's connect starts and its disconnect stops.
final class TickingTimer {
    func stop() {}
}
func startTimer(_ tick: @escaping (Int) -> Void) -> TickingTimer {
    tick(0)
    return TickingTimer()
}
// fragment
