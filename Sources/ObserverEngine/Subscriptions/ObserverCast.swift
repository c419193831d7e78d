/// An observer's cast to an existential `P`, kept as raw words so that a
/// send rebuilds it without a dynamic cast.
///
/// For every value a cast of a class instance can produce (the class
/// itself, `AnyObject`, an existential of any protocols) the bytes are the
/// object reference in the first word followed by type metadata and witness
/// tables, which are never reference counted. Stored, they own nothing; a
/// send takes a strong reference with ``UnownedObserver/retainIfAlive()`` and
/// moves it, with the stored words, into a `P` value it then owns.
extension UnownedObserver {
    /// Copies the bytes of `cast` (the observer cast to `P`) into `words`:
    /// true when they fit, are word-aligned, and begin with a reference to
    /// the observer (then they own exactly that one reference). `words`
    /// (a tuple of `UInt`) is left as it was when false.
    @inlinable
    package func store<P, Words>(cast: P, into words: inout Words) -> Bool {
        guard MemoryLayout<P>.size >= MemoryLayout<UInt>.size, MemoryLayout<P>.size <= MemoryLayout<Words>.size,
            MemoryLayout<P>.alignment <= MemoryLayout<UInt>.alignment
        else { return false }
        var copied = words
        withUnsafeMutableBytes(of: &copied) { destination in
            withUnsafeBytes(of: cast) { destination.copyMemory(from: $0) }
        }
        let first = withUnsafeBytes(of: copied) { $0.load(as: UInt.self) }
        guard isReference(first) else { return false }
        words = copied
        return true
    }

    /// Calls `body` with the observer as `P`, rebuilt from `words` (which
    /// ``store(cast:into:)`` filled, or which hold the observer's address
    /// then `P`'s witness words): false (nothing called) when the
    /// observer's deinit has started. The value owns one reference, taken
    /// here and released after `body`.
    @inlinable @inline(__always)
    package func withCast<P, Words>(from words: Words, as _: P.Type, _ body: (P) -> Void) -> Bool {
        var bytes = words
        return withUnsafeMutableBytes(of: &bytes) { raw in
            guard retainIfAlive() else { return false }
            // The retain just taken becomes the reference owned by `typed`
            // (its first word is the observer's address); destroying `typed`
            // after the call releases it.
            let typed = raw.baseAddress!.withMemoryRebound(to: P.self, capacity: 1) { $0.move() }
            body(typed)
            return true
        }
    }

    /// The first word of the observer's cast: its address.
    @inlinable
    package var castReference: UInt { UInt(bitPattern: address) }
}
