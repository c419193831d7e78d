import CObserverSwiftRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Raw blocks the engine lays out itself (handler cells, retirement
/// records), taken from and given back to the C allocator.
///
/// Not `UnsafeMutableRawPointer.allocate`: for any alignment up to 16 bytes
/// it asks the Swift runtime for "default" alignment, which the runtime
/// serves through `posix_memalign` (measured with callgrind on Linux: about
/// 50 instructions more than `malloc` per block, on every subscribe). A
/// block from here is aligned to 16 bytes, enough for anything the engine
/// stores in one, and must be freed with ``free(_:)``, never `deallocate()`.
@usableFromInline
package enum HeapBlock {
    /// A block of `byteCount` bytes, uninitialized, aligned to 16 bytes.
    /// Stops the process when the allocator has no memory left, as Swift's
    /// own allocations do.
    @inlinable
    package static func allocate(byteCount: Int) -> UnsafeMutableRawPointer {
        guard let block = malloc(byteCount) else { outOfMemory(byteCount) }
        return block
    }

    @usableFromInline @inline(never)
    package static func outOfMemory(_ byteCount: Int) -> Never {
        fatalError("ObserverSwift: out of memory (a block of \(byteCount) bytes)")
    }

    /// The bytes the allocator holds for `block`, a block from
    /// ``allocate(byteCount:)`` or a Swift object's address (the runtime
    /// takes objects aligned to at most 16 bytes from `malloc`): at least
    /// the size asked for, rounded up to the allocator's size class.
    package static func usableSize(of block: UnsafeMutableRawPointer) -> Int {
        csr_heap_block_bytes(block)
    }

    /// Gives back a block from ``allocate(byteCount:)``, its contents
    /// deinitialized.
    @inlinable
    package static func free(_ block: UnsafeMutableRawPointer) {
        #if canImport(Glibc)
            Glibc.free(block)
        #elseif canImport(Darwin)
            Darwin.free(block)
        #endif
    }
}
