// expect-error: cannot find type 'Subscriber' in scope
// The engine's classes stay out of a user's scope: ObserverSwift re-exports
// only the engine's public types, by name (a user's own `Subscriber`, or
// Combine's, never clashes with them).
import ObserverSwift

final class Counter: Subscriber {}
