import CObserverCore

/// A value on the heap that lock-free readers find by its address, loaded
/// inside a read section (``withReadSection(_:)``), and that is released
/// only after every such section has ended (``retire()``): a writer that
/// replaces the address never waits for a reader, however long a reader
/// stays in its section.
///
/// The core's retirement bookkeeping lives in the object itself (its first
/// stored property, see `AtomicWord`'s invariant), so retiring allocates
/// nothing and cannot fail.
@usableFromInline
final class EpochRetiredValue<Value> {
    /// First stored property: `OC_RETIREMENT_BYTES` of memory the core
    /// writes once the object is retired.
    private var record = RetirementRecord()

    @usableFromInline
    let value: Value

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }

    /// A new object holding `value`, retained once for its publisher: the
    /// address to publish, with the retained reference ``retire()`` or
    /// ``release()`` gives back.
    @usableFromInline
    static func published(_ value: Value) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(EpochRetiredValue(value)).toOpaque()
    }

    /// The object published at `address`, borrowed for `body`. Inside a read
    /// section that loaded the address, or by the publisher.
    @inlinable @inline(__always)
    static func withPublished<Result>(at address: UnsafeMutableRawPointer, _ body: (Value) -> Result) -> Result {
        Unmanaged<EpochRetiredValue>.fromOpaque(address)._withUnsafeGuaranteedRef { body($0.value) }
    }

    /// Gives back the publisher's reference to the object at `address` once
    /// every read section in progress has ended. The address must no
    /// longer be published.
    @usableFromInline
    static func retire(at address: UnsafeMutableRawPointer) {
        let object = Unmanaged<EpochRetiredValue>.fromOpaque(address).takeUnretainedValue()
        let record = UnsafeMutableRawPointer(_getUnsafePointerToStoredProperties(object))
        oc_retire(record, releaseRetiredValue, address, MemoryLayout<Value>.size + Int(OC_RETIREMENT_BYTES))
    }

    /// Gives back the publisher's reference at once: for the owner's
    /// `deinit`, when no reader can hold the address.
    @usableFromInline
    static func release(at address: UnsafeMutableRawPointer) {
        Unmanaged<EpochRetiredValue>.fromOpaque(address).release()
    }
}

/// Memory for the core's retirement bookkeeping (`OC_RETIREMENT_BYTES`,
/// checked by `ValueReaderStallTests`).
struct RetirementRecord {
    var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}

/// `oc_retire`'s release: the publisher's reference, given back after the
/// grace period.
private let releaseRetiredValue: @convention(c) (UnsafeMutableRawPointer) -> Void = { context in
    Unmanaged<AnyObject>.fromOpaque(context).release()
}
