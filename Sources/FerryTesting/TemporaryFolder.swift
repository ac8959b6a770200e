import Foundation

/// A fresh, empty folder under the system's temporary directory, for files a test makes; ``remove()`` deletes it.
public struct TemporaryFolder: Sendable {
    /// The folder.
    public let url: URL

    /// Creates the folder, with a name no other test uses.
    public init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "ferry-tests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Deletes the folder and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
