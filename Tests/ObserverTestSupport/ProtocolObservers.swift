/// An observer protocol for the protocol-typed observer tests (registries,
/// Flowduino's observable classes and threads).
public protocol AlphaObserver: AnyObject {
    func alpha(_ value: Int)
}

/// A second observer protocol, for sources that notify several.
public protocol BetaObserver: AnyObject {
    func beta(_ value: Int)
}

/// A protocol that is not class-bound: observers of it are found too.
public protocol LooseObserver {
    func loose(_ value: Int)
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

/// A ``BetaObserver`` and nothing else.
public final class BetaOnly: RecordingObserver, BetaObserver, @unchecked Sendable {
    public func beta(_ value: Int) { record("beta \(value)") }
}

/// An observer of all three protocols.
public final class AlphaAndBeta: RecordingObserver, AlphaObserver, BetaObserver, LooseObserver, @unchecked Sendable {
    public func alpha(_ value: Int) { record("alpha \(value)") }
    public func beta(_ value: Int) { record("beta \(value)") }
    public func loose(_ value: Int) { record("loose \(value)") }
}
