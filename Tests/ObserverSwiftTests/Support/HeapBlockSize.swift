import Foundation
import XCTest

/// The size of the heap block an object lives in, for tests that pin an
/// object's size to a glibc chunk.
enum HeapBlockSize {
    #if os(Linux)
        /// glibc's `malloc_usable_size` of an object: the bytes its heap
        /// block can hold, which tell its chunk (usable + 8, a multiple of
        /// 16). Skips the test under a sanitizer, whose allocator answers
        /// otherwise.
        static func usableSizeOfObjects() throws -> (AnyObject) -> Int {
            typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
            guard !ReliabilityEnvironment.isSanitized,
                let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size")
            else { throw XCTSkip("malloc_usable_size is not glibc's here") }
            let usableSize = unsafeBitCast(symbol, to: UsableSize.self)
            return { usableSize(Unmanaged.passUnretained($0).toOpaque()) }
        }
    #endif
}
