import Foundation

/// Keeps the launch history as a marker file in a folder of the app's own (Application Support on Apple platforms).
public struct FileLaunchHistory: LaunchHistory {
    /// The folder that holds the marker file.
    public var folder: URL

    /// Creates a history kept in `folder`, which is created on the first recorded launch.
    public init(folder: URL) {
        self.folder = folder
    }

    /// The marker file; its content is the time of the first recorded launch.
    public var markerURL: URL { folder.appending(path: "launched") }

    /// Whether the marker file exists.
    public var hasLaunchedBefore: Bool {
        FileManager.default.fileExists(atPath: markerURL.path)
    }

    /// Creates the marker file (and its folder) unless it exists.
    public func recordLaunch() throws {
        guard !hasLaunchedBefore else { return }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stamp = Date.now.formatted(.iso8601) + "\n"
        try Data(stamp.utf8).write(to: markerURL, options: .atomic)
    }

    /// Deletes the marker file; succeeds when there is none.
    public func reset() throws {
        do {
            try FileManager.default.removeItem(at: markerURL)
        } catch let error as CocoaError where error.code == .fileNoSuchFile {
            // Nothing recorded.
        }
    }
}
