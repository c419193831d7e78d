// `for await` over an event's values: the loop body runs in the consuming task.
import ObserverSwift

func firstPositive(of readings: Event<Int>) async -> Int? {
    for await reading in readings.values where reading > 0 {
        return reading
    }
    return nil
}
