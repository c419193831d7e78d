import ObserverEngine

/// The values a source sends, as an `AsyncSequence`.
///
/// The subscription is made when the sequence is created, so values sent
/// before the first `next()` are buffered (per the buffering policy). It
/// ends — and the observer's slot is freed — when the consuming task is
/// cancelled, or when the sequence and its iterator are dropped. When the
/// source itself is deallocated, the sequence finishes.
///
/// ```swift
/// let clicks = Event<Int>()
/// Task {
///     for await count in clicks.values {
///         print("clicked", count)
///     }
/// }
/// ```
public struct ObserverValues<Element: Sendable>: AsyncSequence, Sendable {
    let stream: AsyncStream<Element>

    /// Builds a sequence fed by `subscribe`, which receives the function to
    /// call with each value and returns the subscription to cancel at the end.
    init(
        bufferingPolicy: ObserverBufferingPolicy,
        subscribe: (@escaping @Sendable (Element) -> Void) -> Subscription
    ) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Element.self, bufferingPolicy: bufferingPolicy.streamPolicy(for: Element.self))
        let feed = Feed(continuation)
        let subscription = subscribe { value in feed.yield(value) }
        continuation.onTermination = { _ in subscription.cancel() }
        self.stream = stream
    }

    /// Owned by the subscription's handler: when the source releases the
    /// handler (the source was deallocated), the sequence finishes instead of
    /// leaving its consumer waiting forever.
    final class Feed: Sendable {
        let continuation: AsyncStream<Element>.Continuation

        init(_ continuation: AsyncStream<Element>.Continuation) {
            self.continuation = continuation
        }

        func yield(_ value: Element) {
            continuation.yield(value)
        }

        deinit {
            continuation.finish()
        }
    }

    /// Iterates the buffered values; made by ``makeAsyncIterator()``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.AsyncIterator

        /// The next value, waiting for one if the buffer is empty; `nil` once
        /// the sequence has finished (the consuming task was cancelled or the
        /// source was deallocated).
        public mutating func next() async -> Element? {
            await base.next()
        }
    }

    /// Makes the iterator a `for await` loop uses. Iterate a sequence from
    /// one task: as with `AsyncStream`, each value goes to one iterator only.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator())
    }
}
