import Foundation

/// What a recorder, ``settleDeliveries(timeout:)`` or a leak check throws
/// when an expectation fails: its `description` says which source, what was
/// expected and what arrived (or what is still pending, or which
/// subscriptions leaked, with the line each was made on).
///
/// XCTest and Swift Testing both report a thrown error with its
/// description, so a test needs neither `XCTFail` nor `#expect` around
/// these calls.
public struct ObserverTestFailure: Error, CustomStringConvertible, LocalizedError, Sendable {
    /// The failure in words.
    public let description: String

    /// A failure saying `description`.
    public init(_ description: String) { self.description = description }

    /// The same text, for `localizedDescription`.
    public var errorDescription: String? { description }
}
