import FerryCore
@testable import FerryServer
import FerryTesting
import Foundation
import Testing

/// A blob file that makes its caller wait (a slow disk, a network volume) holds a file-work thread, never one of the
/// cooperative threads every request runs on.
@Suite("Blobs: file calls off the threads that serve requests")
struct BlockingFileTests {
    @Test("twice as many blob reads as there are cores, each waiting in `open` (a FIFO with no writer yet), leave tasks running")
    func waitingFilesLeaveThePoolFree() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try FileBlobStore(folder: folder.url.path())
        let space = UUID()
        let spaceFolder = folder.url.path() + "/blobs/" + space.lowercasedText
        try FileManager.default.createDirectory(atPath: spaceFolder, withIntermediateDirectories: true)
        let keys = (0..<ProcessInfo.processInfo.activeProcessorCount * 2).map { index in
            BlobKey(space: space, sha256: String(format: "%064x", index))
        }
        for key in keys { #expect(mkfifo(spaceFolder + "/" + key.sha256, 0o600) == 0) }

        let readers = keys.map { key in
            Task {
                for try await _ in try await store.read(key, from: 0) {}
            }
        }
        // A thread of its own lets the readers go after 3 s (opening each FIFO for writing), whatever happens here.
        let paths = keys.map { spaceFolder + "/" + $0.sha256 }
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 3)
            for path in paths { close(open(path, O_WRONLY)) }
        }
        let start = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(300))  // every reader is in `open` by now
        let sum = await Task.detached { (1...1000).reduce(0, +) }.value
        let waited = ContinuousClock.now - start
        #expect(sum == 500_500)
        #expect(waited < .seconds(2), "a task waited \(waited) for a cooperative thread while blob files blocked")
        for reader in readers { try await reader.value }
    }
}
