import ObserverEngine

extension ObserverBufferingPolicy {
    /// The same policy for the `AsyncStream` behind an ``ObserverValues``.
    func streamPolicy<Element>(for _: Element.Type) -> AsyncStream<Element>.Continuation.BufferingPolicy {
        switch kind {
        case .unbounded: return .unbounded
        case .newest(let limit): return .bufferingNewest(limit)
        case .oldest(let limit): return .bufferingOldest(limit)
        }
    }
}
