/// How values wait for a consumer that has not taken them yet: an
/// ``ObserverValues`` sequence's buffer or an actor subscription's mailbox
/// (`subscribe(isolatedTo:bufferingPolicy:)`), in the style of
/// swift-async-algorithms' `buffer(policy:)`. What a policy drops is
/// released when it is dropped.
///
/// <!-- snippet: fragment of ValueStreams -->
/// ```swift
/// for await price in ticker.values(bufferingPolicy: .bufferingNewest(1)) {
///     render(price)          // a slow consumer only ever sees the latest price
/// }
/// ```
public struct ObserverBufferingPolicy: Sendable, Equatable {
    enum Kind: Equatable {
        case unbounded
        case newest(Int)
        case oldest(Int)
    }

    let kind: Kind

    /// Keeps every value until it is consumed (memory grows with the backlog).
    public static var unbounded: Self { Self(kind: .unbounded) }

    /// Keeps at most `limit` values, dropping the oldest when full.
    /// A negative limit is treated as zero (values are dropped unless a
    /// consumer is already waiting).
    public static func bufferingNewest(_ limit: Int) -> Self { Self(kind: .newest(max(0, limit))) }

    /// Keeps at most `limit` values, dropping new ones when full.
    /// A negative limit is treated as zero.
    public static func bufferingOldest(_ limit: Int) -> Self { Self(kind: .oldest(max(0, limit))) }
}
