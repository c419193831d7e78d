/// The synchronous form of an `@isolated(any)` handler: the same function
/// value, typed without its isolation, so that the engine can call it
/// without `await`.
///
/// Swift offers no checked way to do this. Calling an `@isolated(any)`
/// synchronous function directly is rejected, on the sending thread ("call
/// to @isolated(any) parameter 'handler' in a synchronous nonisolated
/// context", `#ActorIsolatedCall`) and even where its isolation holds ("...
/// in a synchronous main actor-isolated context"); the only checked call is
/// `await handler(value)`, which would make every send asynchronous.
///
/// Invariant, which every caller keeps: `Isolated` is `IsolatedHandler`
/// (or `IsolatedTargetHandler`) and `Plain` is `SynchronousHandler`
/// (`SynchronousTargetHandler`) of the same type arguments: two structs
/// whose one stored property is the same function type but for
/// `@isolated(any)`. The result's function is called only where the
/// handler's isolation holds (nil: any thread; the main actor: inside
/// `MainActor.assumeIsolated`; another actor: inside a job isolated to it).
/// Both functions are a function pointer and a context (16 bytes); the
/// isolation travels in the context, which the function ignores when
/// called. The structs are what is cast, not the functions: a function
/// passed as a generic value would be wrapped in a reabstraction thunk on
/// the way in and another on the way out, and every delivery would pay for
/// both. This is an observation of Swift 6.3's ABI, not a documented
/// guarantee: the size check below and `UnsafeSynchronousFormTests`
/// (captures, generic values, method references, a closure stored first,
/// two arguments) fail if it changes.
@inlinable
@inline(__always)
package func unsafeSynchronousForm<Isolated, Plain>(of handler: Isolated, as plain: Plain.Type) -> Plain {
    precondition(
        MemoryLayout<Isolated>.size == MemoryLayout<Plain>.size,
        "an @isolated(any) handler no longer has a plain closure's layout")
    return unsafeBitCast(handler, to: Plain.self)
}
