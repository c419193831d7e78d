import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A started POSIX thread running a closure; `join()` waits for it.
///
/// Benchmarks need plain threads they start and join at precise moments
/// (no pool, no executor hops), so this wraps `pthread_create`.
final class BenchThread {
    private let thread: pthread_t

    init(_ body: @escaping () -> Void) {
        thread = startThread(Unmanaged.passRetained(ThreadJob(body)).toOpaque())
    }

    func join() {
        pthread_join(thread, nil)
    }
}

/// What a `BenchThread` runs; the new thread takes over the retain.
private final class ThreadJob {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// The body of every `BenchThread`: runs the `ThreadJob` at `job` and releases it.
private func runThreadJob(_ job: UnsafeMutableRawPointer) {
    Unmanaged<ThreadJob>.fromOpaque(job).takeRetainedValue().body()
}

#if os(Linux)
    /// Starts a thread running the retained `ThreadJob` at `job`. glibc:
    /// `pthread_t` is an integer and the start routine's argument is optional.
    private func startThread(_ job: UnsafeMutableRawPointer) -> pthread_t {
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            {
                runThreadJob($0!)
                return nil
            }, job)
        if status != 0 { Verification.fail("pthread_create failed with \(status)") }
        return thread
    }
#elseif canImport(Darwin)
    /// Starts a thread running the retained `ThreadJob` at `job`. Darwin:
    /// `pthread_t` is a non-null pointer, written through a `pthread_t?`, and
    /// the start routine's argument is not optional.
    private func startThread(_ job: UnsafeMutableRawPointer) -> pthread_t {
        var thread: pthread_t?
        let status = pthread_create(
            &thread, nil,
            {
                runThreadJob($0)
                return nil
            }, job)
        guard status == 0, let thread else { Verification.fail("pthread_create failed with \(status)") }
        return thread
    }
#endif

/// Shared flags for a group of benchmark threads: a start line and a stop flag.
final class StartLine: Sendable {
    let ready = Atomic<Int>(0)
    let go = Atomic<Bool>(false)
    let stop = Atomic<Bool>(false)

    /// Called by a worker: announces itself, then spins until `release()`.
    func arriveAndWait() {
        ready.wrappingAdd(1, ordering: .acquiringAndReleasing)
        while !go.load(ordering: .acquiring) { sched_yield() }
    }

    /// Waits for `workers` arrivals, then lets them all go.
    func release(workers: Int) {
        while ready.load(ordering: .acquiring) < workers { sched_yield() }
        go.store(true, ordering: .releasing)
    }

    var shouldStop: Bool { stop.load(ordering: .relaxed) }
}
