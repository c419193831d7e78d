import CNATS
import Foundation
import ObserverSwift

/// Owns one `natsConnection`: destroyed when the bridge and every export
/// and import using it are gone. Publishing on it after
/// ``NATSBridge/close(timeout:)`` is safe: cnats answers `NATS_CONNECTION_CLOSED`.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class NATSConnection: @unchecked Sendable {
    // @unchecked: `pointer` is immutable and cnats' connection functions are
    // thread-safe (the connection has its own lock); it is destroyed in deinit,
    // when no other reference can call through it.
    let pointer: OpaquePointer

    init(pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        // The last reference may go on one of cnats' own threads (an export's
        // closure released by a send on a delivery thread, an import released by
        // its on-complete callback), where destroying the connection would free
        // it under cnats' feet: destroy it from a Dispatch thread instead.
        NATSConnection.destroy(pointer) { natsConnection_Destroy($0) }
    }

    /// Runs `destroy(pointer)` on a Dispatch worker thread, never on the calling one.
    static func destroy(_ pointer: OpaquePointer, _ destroy: @escaping @Sendable (OpaquePointer) -> Void) {
        let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer)))
        teardown.async { destroy(OpaquePointer(bitPattern: Int(bitPattern: address))!) }
    }

    static let teardown = DispatchQueue(label: "ObserverNATS.teardown")
}

/// Receives the connection's callbacks (cnats' own callback thread) and
/// turns them into ``NATSStatus`` values. cnats holds a retained reference
/// from connect until its closed callback, the last one it makes.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
final class ConnectionCallbacks: Sendable {
    let status: Event<NATSStatus>
    let closedSignal = DispatchSemaphore(value: 0)
    /// The subject each import subscribed, by its `natsSubscription` address, for slow-consumer reports.
    let importSubjects: Locked<[UInt: String]> = Locked([:])
    /// Where the server's permission denials go (see ``PermissionDenials``).
    let denials = PermissionDenials()

    init(status: Event<NATSStatus>) {
        self.status = status
        denials.setOwner(self)
    }

    static func from(_ closure: UnsafeMutableRawPointer?) -> ConnectionCallbacks {
        Unmanaged<ConnectionCallbacks>.fromOpaque(closure!).takeUnretainedValue()
    }

    static func connectedURL(_ connection: OpaquePointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        if natsConnection_GetConnectedUrl(connection, &buffer, buffer.count) != NATS_OK { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Installs the callbacks on `options`; `closure` is this object, retained.
    func install(on options: OpaquePointer, closure: UnsafeMutableRawPointer) throws(NATSError) {
        try NATSError.check(
            natsOptions_SetDisconnectedCB(
                options,
                { connection, closure in
                    ConnectionCallbacks.markCallbackThread(closure)
                    // cnats also reports the socket that `natsConnection_Close` shuts as a
                    // disconnection, with the connection already marked closed (it runs this
                    // callback later, on its callback thread): that one is no loss and no
                    // reconnection follows, so only `.closed` is reported.
                    if let connection, natsConnection_IsClosed(connection) { return }
                    ConnectionCallbacks.from(closure).status.send(.disconnected)
                }, closure),
            "setting the disconnected callback")
        try NATSError.check(
            natsOptions_SetReconnectedCB(
                options,
                { connection, closure in
                    ConnectionCallbacks.markCallbackThread(closure)
                    ConnectionCallbacks.from(closure).status.send(
                        .reconnected(url: ConnectionCallbacks.connectedURL(connection)))
                }, closure),
            "setting the reconnected callback")
        try NATSError.check(
            natsOptions_SetClosedCB(
                options,
                { _, closure in
                    ConnectionCallbacks.markCallbackThread(closure)
                    // The last callback cnats makes for this connection: give back its reference.
                    let callbacks = Unmanaged<ConnectionCallbacks>.fromOpaque(closure!).takeRetainedValue()
                    callbacks.status.send(.closed)
                    callbacks.closedSignal.signal()
                }, closure),
            "setting the closed callback")
        try NATSError.check(
            natsOptions_SetErrorHandler(
                options,
                { connection, subscription, error, closure in
                    ConnectionCallbacks.markCallbackThread(closure)
                    let callbacks = ConnectionCallbacks.from(closure)
                    // A denial, or a marker the bridge queued itself (see `PermissionDenials`).
                    if error == NATS_NOT_PERMITTED || error == NATS_ERR {
                        let text = PermissionDenials.callbackText()
                        if callbacks.denials.handle(text, status: callbacks.status) { return }
                        if error == NATS_NOT_PERMITTED, let text {
                            // A denial of nothing the bridge is making or exporting now (a cancelled
                            // export's subject, an import's subscription after the permissions
                            // changed): the server's words name the subject.
                            callbacks.status.send(.error(text))
                            return
                        }
                    }
                    callbacks.asyncError(subscription: subscription, error: error)
                }, closure),
            "setting the error handler")
    }

    func asyncError(subscription: OpaquePointer?, error: natsStatus) {
        if error == NATS_SLOW_CONSUMER, let subscription {
            // cnats passes the subscription unretained, and the callback may run after a cancelled
            // import's subscription was destroyed: touch it only while it is registered (an
            // import unregisters it, under this lock, before destroying it).
            let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(subscription)))
            let report = importSubjects.withLock { subjects -> (subject: String, dropped: Int64)? in
                guard let subject = subjects[address] else { return nil }
                var dropped: Int64 = 0
                _ = natsSubscription_GetDropped(subscription, &dropped)
                return (subject, dropped)
            }
            if let report {
                status.send(.slowConsumer(subject: report.subject, dropped: Int(report.dropped)))
            } else {
                // A subscription of cnats' own (JetStream acknowledgments, a mirror's watcher), or
                // an import's already destroyed: not one to read from.
                status.send(.error("slow consumer: a client-internal subscription dropped messages"))
            }
            return
        }
        status.send(.error(String(cString: natsStatus_GetText(error))))
    }
}
