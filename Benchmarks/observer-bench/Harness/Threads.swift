import Glibc
import Synchronization

/// A started POSIX thread running a closure; `join()` waits for it.
///
/// Benchmarks need plain threads they start and join at precise moments
/// (no pool, no executor hops), so this wraps `pthread_create`.
final class BenchThread {
    private var thread = pthread_t()

    private final class Job {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    init(_ body: @escaping () -> Void) {
        let job = Unmanaged.passRetained(Job(body)).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { raw in
                let job = Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue()
                job.body()
                return nil
            }, job)
        if status != 0 {
            Verification.fail("pthread_create failed with \(status)")
        }
    }

    func join() {
        pthread_join(thread, nil)
    }
}

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
