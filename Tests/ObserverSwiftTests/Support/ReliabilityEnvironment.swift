import Foundation

/// Knobs of the reliability tests (short form by default; the Makefile's
/// `torture` target and the long forms set them) and small process facts.
enum ReliabilityEnvironment {
    /// An integer from the environment, or `defaultValue`.
    static func integer(_ name: String, default defaultValue: Int) -> Int {
        guard let text = ProcessInfo.processInfo.environment[name], let value = Int(text) else {
            return defaultValue
        }
        return value
    }

    static func isSet(_ name: String) -> Bool {
        ProcessInfo.processInfo.environment[name].map { !$0.isEmpty && $0 != "0" } ?? false
    }

    /// Seconds the torture test runs: `OBSERVER_TORTURE_SECONDS` (`make
    /// torture DURATION=600`); 2 s in the ordinary suite.
    static var tortureSeconds: Double {
        Double(integer("OBSERVER_TORTURE_SECONDS", default: 2))
    }

    /// Subscribe/unsubscribe cycles of the bounded-memory test
    /// (`OBSERVER_MEMORY_CYCLES`, long form 10_000_000).
    static var memoryCycles: Int { integer("OBSERVER_MEMORY_CYCLES", default: 200_000) }

    /// Operations per seed of the model-based test (`OBSERVER_MODEL_OPS`,
    /// long form 1_000_000).
    static var modelOperations: Int { integer("OBSERVER_MODEL_OPS", default: 10_000) }

    /// A seed to replay (`OBSERVER_MODEL_SEED`), printed by a failing run.
    static var modelSeed: UInt64? {
        ProcessInfo.processInfo.environment["OBSERVER_MODEL_SEED"].flatMap { UInt64($0) }
    }

    /// Whether a sanitizer runtime is loaded (RSS is then meaningless:
    /// shadow memory and ASan's quarantine grow it on purpose).
    static var isSanitized: Bool {
        guard let handle = dlopen(nil, RTLD_NOW) else { return false }
        defer { dlclose(handle) }
        return dlsym(handle, "__asan_init") != nil || dlsym(handle, "__tsan_init") != nil
    }

    /// Resident set size of this process in bytes, or nil where it cannot
    /// be read (Linux: `/proc/self/statm`; Darwin: the task's basic info).
    static var residentBytes: Int? {
        #if canImport(Darwin)
            var info = mach_task_basic_info()
            var count = mach_msg_type_number_t(
                MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
            let status = withUnsafeMutablePointer(to: &info) {
                $0.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
                    task_info(mach_task_self_, task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count)
                }
            }
            return status == KERN_SUCCESS ? Int(info.resident_size) : nil
        #else
            guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
            let fields = text.split(separator: " ")
            guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #endif
    }
}

/// Runs `body` on `count` new POSIX threads and joins them all (a join waits
/// for the thread's exit, thread-local destructors included).
func runOnNewThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Work: @unchecked Sendable {
        // @unchecked: immutable after init; handed to exactly one thread.
        let body: @Sendable (Int) -> Void
        let index: Int
        init(body: @escaping @Sendable (Int) -> Void, index: Int) {
            self.body = body
            self.index = index
        }
    }
    var threads: [pthread_t] = []
    threads.reserveCapacity(count)
    for index in 0..<count {
        let work = Unmanaged.passRetained(Work(body: body, index: index)).toOpaque()
        // pthread_t is a value on Linux and a non-null pointer on Darwin, and
        // the start routine's argument is optional on Linux only.
        #if canImport(Darwin)
            var created: pthread_t?
            let status = pthread_create(
                &created, nil,
                { argument in
                    let work = Unmanaged<Work>.fromOpaque(argument).takeRetainedValue()
                    work.body(work.index)
                    return nil
                }, work)
            precondition(status == 0, "pthread_create failed: \(status)")
            threads.append(created!)
        #else
            var thread = pthread_t()
            let status = pthread_create(
                &thread, nil,
                { argument in
                    let work = Unmanaged<Work>.fromOpaque(argument!).takeRetainedValue()
                    work.body(work.index)
                    return nil
                }, work)
            precondition(status == 0, "pthread_create failed: \(status)")
            threads.append(thread)
        #endif
    }
    for thread in threads {
        pthread_join(thread, nil)
    }
}
