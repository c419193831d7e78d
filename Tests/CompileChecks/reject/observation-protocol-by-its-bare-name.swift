// expect-error: reference to generic type 'Observable' requires arguments in <...>
// Beside ObserverSwiftCompat, a plain `Observable` is the seeds' class: Swift's
// Observation protocol must be written `Observation.Observable`.
import Observation
import ObserverSwiftCompat

func track(_ model: some Observable) {}
