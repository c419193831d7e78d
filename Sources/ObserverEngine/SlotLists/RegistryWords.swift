/// The atomic words of a protocol-typed registry (`ObserverRegistry`), kept
/// as the registry's first stored property (see `AtomicWord`), and the
/// atomic views of them. `ViewNode` is the type of the registry's protocol
/// view nodes.
@usableFromInline
package struct RegistryWords<ViewNode: AnyObject> {
    /// The views word (see ``RegistryViewsWord``): nil, a view node, or the
    /// sole stored observer (then not a node's address).
    @usableFromInline package var viewHead = AtomicWordStorage<Unmanaged<ViewNode>?>(nil)
    @usableFromInline package var hasPendingAdds = AtomicWordStorage<Bool>(false)
    /// In the byte after `hasPendingAdds` (the word's padding otherwise).
    @usableFromInline package var storesAddsAtOnce = AtomicWordStorage<Bool>(false)
    /// After those two bytes, at the next word: the writer state's
    /// publish-once word (see ``LazyObjectWord``).
    @usableFromInline package var writerState = LazyObjectStorage(nil)

    @inlinable package init() {}

    @inlinable package static var viewHeadOffset: Int { 0 }
    @inlinable package static var hasPendingAddsOffset: Int { MemoryLayout<UInt>.stride }
    @inlinable package static var storesAddsAtOnceOffset: Int { hasPendingAddsOffset + MemoryLayout<UInt8>.stride }
    @inlinable package static var writerStateOffset: Int { 2 * MemoryLayout<UInt>.stride }

    /// `registry`'s views word.
    @inlinable @inline(__always)
    package static func views(of registry: AnyObject) -> RegistryViewsWord<ViewNode> {
        RegistryViewsWord(in: registry, at: viewHeadOffset)
    }

    /// `registry`'s word that says observers added wait to be stored.
    @inlinable @inline(__always)
    package static func hasPendingAdds(of registry: AnyObject) -> AtomicWord<Bool> {
        AtomicWords.word(registry, at: hasPendingAddsOffset)
    }

    /// `registry`'s word that says its adds are stored at once.
    @inlinable @inline(__always)
    package static func storesAddsAtOnce(of registry: AnyObject) -> AtomicWord<Bool> {
        AtomicWords.word(registry, at: storesAddsAtOnceOffset)
    }

    /// `registry`'s writer state, published once.
    @inlinable @inline(__always)
    package static func writerState<State: AnyObject>(of registry: AnyObject, as _: State.Type) -> LazyObjectWord<State>
    {
        LazyObjectWord(AtomicWords.word(registry, at: writerStateOffset))
    }
}
