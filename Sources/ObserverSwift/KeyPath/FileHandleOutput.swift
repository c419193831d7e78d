import Foundation

/// Writes library diagnostics.
enum FileHandleOutput {
    static func standardError(_ message: String) {
        FileHandle.standardError.write(Data(message.utf8))
    }
}
