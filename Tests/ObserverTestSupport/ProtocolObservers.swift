/// An observer protocol for the protocol-typed observer tests (registries,
/// Flowduino's observable classes and threads).
public protocol AlphaObserver: AnyObject {
    func alpha(_ value: Int)
}

/// Records every call it receives, thread-safely; subclasses conform to the
/// tests' observer protocols.
open class RecordingObserver: @unchecked Sendable {
    // @unchecked: all mutable state is in a SharedVariable.
    public let name: String
    private let calls = SharedVariable<[String]>([])

    public init(_ name: String) { self.name = name }

    public func record(_ call: String) { calls.update { $0.append(call) } }

    public var recorded: [String] { calls.value }
    public var callCount: Int { calls.value.count }
}

/// An ``AlphaObserver`` and nothing else.
public final class AlphaOnly: RecordingObserver, AlphaObserver, @unchecked Sendable {
    public func alpha(_ value: Int) { record("alpha \(value)") }
}
