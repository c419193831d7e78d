import CNATS
import Foundation
import ObserverSwift

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension JetStreamContext {
    // MARK: Streams

    /// Creates `stream` unless a stream of that name exists; an existing one must have every
    /// setting `stream` states. Returns the stream's retention (the server's when it exists).
    @discardableResult
    func ensure(_ stream: NATSStream) throws(NATSError) -> NATSStream.Retention {
        try stream.checkSettings()
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let found = stream.name.withCString { js_GetStreamInfo(&info, pointer, $0, nil, &code) }
        if found == NATS_OK, let info {
            defer { jsStreamInfo_Destroy(info) }
            let existing = info.pointee.Config.pointee
            let differences = Self.differences(stream, existing)
            guard differences.isEmpty else {
                throw NATSError(
                    .jetStream,
                    "stream \(stream.name) exists with another configuration: \(differences.joined(separator: "; "))")
            }
            return Self.retention(existing.Retention)
        }
        guard found == NATS_NOT_FOUND else {
            throw NATSError.from(found, "looking up stream \(stream.name)")!.asJetStream
        }
        var config = jsStreamConfig()
        _ = jsStreamConfig_Init(&config)
        let name = strdup(stream.name)
        let subjects = stream.subjects.map { UnsafePointer(strdup($0)) }
        defer {
            free(name)
            subjects.forEach { free(UnsafeMutablePointer(mutating: $0)) }
        }
        let retention = stream.retention ?? .limits
        config.Name = UnsafePointer(name)
        config.Storage = stream.storage == .memory ? js_MemoryStorage : js_FileStorage
        config.Retention = Self.retentionPolicy(retention)
        config.Replicas = Int64(stream.replicas ?? 1)
        config.MaxAge = stream.maxAge.map { $0.wholeMilliseconds * 1_000_000 } ?? 0
        config.Duplicates =
            Int64((stream.duplicateWindow ?? NATSStream.defaultDuplicateWindow).wholeMilliseconds) * 1_000_000
        let added = subjects.withUnsafeBufferPointer { buffer -> natsStatus in
            config.Subjects = UnsafeMutablePointer(mutating: buffer.baseAddress)
            config.SubjectsLen = Int32(buffer.count)
            return js_AddStream(&info, pointer, &config, nil, &code)
        }
        if added == NATS_OK {
            jsStreamInfo_Destroy(info)
            return retention
        }
        throw NATSError.from(added, "creating stream \(stream.name) (JetStream error \(code.rawValue))")!.asJetStream
    }

    static func retentionPolicy(_ retention: NATSStream.Retention) -> jsRetentionPolicy {
        switch retention {
        case .limits: js_LimitsPolicy
        case .interest: js_InterestPolicy
        case .workQueue: js_WorkQueuePolicy
        }
    }

    static func retention(_ policy: jsRetentionPolicy) -> NATSStream.Retention {
        switch policy {
        case js_InterestPolicy: .interest
        case js_WorkQueuePolicy: .workQueue
        default: .limits
        }
    }

    /// How the existing stream's configuration differs from what `wanted` states, one phrase each
    /// (a setting `wanted` leaves nil is not compared).
    static func differences(_ wanted: NATSStream, _ existing: jsStreamConfig) -> [String] {
        var differences: [String] = []
        let subjects = (0..<Int(existing.SubjectsLen)).compactMap { index in
            existing.Subjects[index].map { String(cString: $0) }
        }
        if Set(subjects) != Set(wanted.subjects) {
            differences.append("subjects \(subjects.sorted()) (wanted \(wanted.subjects.sorted()))")
        }
        // A stream created without replicas reports 0, which is 1.
        let replicas = max(1, existing.Replicas)
        if let wantedReplicas = wanted.replicas, replicas != Int64(wantedReplicas) {
            differences.append("replicas \(replicas) (wanted \(wantedReplicas))")
        }
        let storage: NATSStream.Storage = existing.Storage == js_MemoryStorage ? .memory : .file
        if let wantedStorage = wanted.storage, storage != wantedStorage {
            differences.append("storage \(storage) (wanted \(wantedStorage))")
        }
        let retention = retention(existing.Retention)
        if let wantedRetention = wanted.retention, retention != wantedRetention {
            differences.append("retention \(retention) (wanted \(wantedRetention))")
        }
        if let wantedAge = wanted.maxAge {
            let maxAge = max(0, wantedAge.wholeMilliseconds) * 1_000_000
            if existing.MaxAge != maxAge {
                differences.append(
                    "max age \(describe(nanoseconds: existing.MaxAge)) (wanted \(describe(nanoseconds: maxAge)))")
            }
        }
        if let wantedWindow = wanted.duplicateWindow {
            let duplicates = Int64(wantedWindow.wholeMilliseconds) * 1_000_000
            if existing.Duplicates != duplicates {
                differences.append(
                    "duplicate window \(describe(nanoseconds: existing.Duplicates)) "
                        + "(wanted \(describe(nanoseconds: duplicates)))")
            }
        }
        return differences
    }

    static func describe(nanoseconds: Int64) -> String {
        nanoseconds == 0 ? "unlimited" : "\(Double(nanoseconds) / 1e9) s"
    }

    /// The names of the streams that store `subject` (JetStream's stream lookup by subject).
    func streams(storing subject: String) throws(NATSError) -> [String] {
        let request: Data
        do {
            request = try JSONSerialization.data(withJSONObject: ["subject": subject])
        } catch {
            throw NATSError(.invalidSubject, "\"\(subject)\" cannot be sent in a stream lookup")
        }
        var reply: OpaquePointer?
        let result = request.withUnsafeBytes { bytes in
            natsConnection_Request(
                &reply, connection.pointer, "$JS.API.STREAM.NAMES", bytes.baseAddress, Int32(bytes.count), 5000)
        }
        if let error = NATSError.from(result, "looking up the stream that stores \(subject)") {
            throw error.asJetStream
        }
        defer { natsMsg_Destroy(reply) }
        let data = Data(
            bytes: natsMsg_GetData(reply), count: Int(natsMsg_GetDataLength(reply)))
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw NATSError(.jetStream, "the stream lookup for \(subject) answered something that is not JSON")
        }
        if let error = object["error"] as? [String: Any] {
            throw NATSError(
                .jetStream, "looking up the stream that stores \(subject): \(error["description"] ?? "unknown error")")
        }
        return object["streams"] as? [String] ?? []
    }

    /// Throws unless `stream` is the one stream that stores `subject`.
    func checkStored(_ subject: String, in stream: String) throws(NATSError) {
        let names = try streams(storing: subject)
        if names.isEmpty {
            throw NATSError(
                .jetStream, "no stream stores \(subject): stream \(stream) does not cover it, nothing would be stored")
        }
        guard names == [stream] else {
            throw NATSError(
                .jetStream,
                "\(subject) is stored by stream \(names.sorted().joined(separator: ", ")), not \(stream)")
        }
    }
}
