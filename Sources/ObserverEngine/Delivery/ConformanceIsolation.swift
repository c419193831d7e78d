import CObserverSwiftRuntime

/// How an object conforms to the protocols of an existential type `P`, asked
/// of the Swift runtime, independently of the calling thread's isolation.
///
/// A dynamic cast (`object as? P`) of a conformance isolated to a global
/// actor (`extension Screen: @MainActor P`) succeeds only when it runs on
/// that actor; made anywhere else it fails as if there were no conformance.
/// This tells the two apart, so that the protocol-typed registries never
/// decide an observer's fate by where a cast happened to run.
package enum ConformanceIsolation: Equatable {
    /// Conforms to every protocol of `P` with no isolation (or `P` is not an
    /// existential of protocols: a class, `AnyObject`, `Any`).
    case nonisolated
    /// Conforms, and at least one conformance is isolated to the main actor
    /// (none to another global actor).
    case mainActor
    /// Conforms, and at least one conformance is isolated to a global actor
    /// other than the main actor: that global actor's type (the first one
    /// found).
    case otherGlobalActor(GlobalActorType)
    /// Conforms, with conformances isolated to two different global actors
    /// (`P` is a composition): no one actor can make every call.
    case severalGlobalActors
    /// Does not conform to every protocol of `P`.
    case none
    /// The runtime cannot answer (it predates isolated conformances), or `P`
    /// is an existential whose layout is not read here (a parameterized
    /// protocol): decide by the cast alone.
    case unknown

    /// Whether a conformance is isolated to a global actor (or to two):
    /// calls to the observer must run on that actor. Inlinable, so that a
    /// registry's add decides it without a call into the engine.
    @inlinable
    package var isIsolated: Bool {
        switch self {
        case .mainActor, .otherGlobalActor, .severalGlobalActors: true
        case .nonisolated, .none, .unknown: false
        }
    }

    /// Kind 0x303 (MetadataKind::Existential) in the Swift ABI.
    private static let existentialKind: UInt = 0x303
    /// ExistentialTypeFlags: a superclass constraint precedes the protocols.
    private static let hasSuperclassConstraint: UInt32 = 0x4000_0000

    /// Reads the protocols of `P`'s existential metadata (Swift ABI:
    /// `TargetExistentialTypeMetadata` — kind word, 32-bit flags, 32-bit
    /// protocol count, an optional superclass, then one descriptor reference
    /// per protocol) and asks the runtime about each.
    package static func of<P>(_ object: AnyObject, as _: P.Type) -> ConformanceIsolation {
        let metadata = unsafeBitCast(P.self as Any.Type, to: UnsafeRawPointer.self)
        guard metadata.load(as: UInt.self) == existentialKind else { return .nonisolated }
        let flags = metadata.load(fromByteOffset: MemoryLayout<UInt>.size, as: UInt32.self)
        let count = Int(metadata.load(fromByteOffset: MemoryLayout<UInt>.size + 4, as: UInt32.self))
        var offset = MemoryLayout<UInt>.size + 8
        if flags & hasSuperclassConstraint != 0 { offset += MemoryLayout<UInt>.size }
        let objectType = unsafeBitCast(type(of: object) as Any.Type, to: UnsafeRawPointer.self)
        let mainActorType = unsafeBitCast(MainActor.self as Any.Type, to: UnsafeRawPointer.self)
        var result = ConformanceIsolation.nonisolated
        for index in 0..<count {
            let reference = metadata.load(
                fromByteOffset: offset + index * MemoryLayout<UInt>.size, as: UInt.self)
            // The low bit marks an Objective-C protocol, which has no isolation.
            if reference & 1 != 0 { continue }
            guard let descriptor = UnsafeRawPointer(bitPattern: reference) else { return .unknown }
            var isolation: UnsafeRawPointer?
            switch csr_conformance_isolation(objectType, descriptor, &isolation) {
            case 0: return .none
            case 1: break
            default: return .unknown
            }
            guard let isolation else { continue }
            switch result {
            case .nonisolated:
                result =
                    isolation == mainActorType ? .mainActor : .otherGlobalActor(GlobalActorType(metadata: isolation))
            case .mainActor where isolation == mainActorType:
                break
            case .otherGlobalActor(let found) where found.metadata == isolation:
                break
            default:
                result = .severalGlobalActors
            }
        }
        return result
    }
}

/// The type of a global actor an object's conformance is isolated to, as
/// the runtime reports it: equal for the same actor type, usable as a key.
package struct GlobalActorType: Hashable, @unchecked Sendable {
    // @unchecked: type metadata is immutable and lives as long as the process.

    /// The type's metadata.
    fileprivate let metadata: UnsafeRawPointer

    fileprivate init(metadata: UnsafeRawPointer) { self.metadata = metadata }

    /// The type, for a check that it is a given one (`== JobWorker.self`).
    package var type: Any.Type { unsafeBitCast(metadata, to: Any.Type.self) }

    /// The global actor's shared instance; nil when the type is not a
    /// `GlobalActor` (never for a type the runtime reported). Reading it may
    /// run the actor's initializer, which is the program's code.
    package var shared: (any Actor)? {
        guard let globalActorType = type as? any GlobalActor.Type else { return nil }
        return globalActorType.shared
    }
}
