import CObserverCore

/// One object reference given back after a grace period: `oc_retire`'s
/// record for it is a block allocated for this retirement alone (the core's
/// bookkeeping, then the reference), so the object carries none of it while
/// it is in use.
enum RetiredReference {
    /// Once every read section in progress has ended, calls `release` with
    /// the record; `release` gets the reference back with ``take(from:)``.
    /// `reference` is an object's address: the core's statistics count its
    /// heap block and the record's as pending until then.
    static func retire(
        _ reference: UnsafeMutableRawPointer, release: @convention(c) (UnsafeMutableRawPointer) -> Void
    ) {
        let record = HeapBlock.allocate(
            byteCount: Int(OC_RETIREMENT_BYTES) + MemoryLayout<UnsafeMutableRawPointer>.stride)
        record.storeBytes(of: reference, toByteOffset: Int(OC_RETIREMENT_BYTES), as: UnsafeMutableRawPointer.self)
        let bytes = HeapBlock.usableSize(of: reference) + HeapBlock.usableSize(of: record)
        oc_retire(record, release, record, bytes)
    }

    /// In a `release` passed to ``retire(_:release:)``: frees the
    /// record and returns the reference it held.
    static func take(from record: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        let reference = record.load(fromByteOffset: Int(OC_RETIREMENT_BYTES), as: UnsafeMutableRawPointer.self)
        HeapBlock.free(record)
        return reference
    }
}
