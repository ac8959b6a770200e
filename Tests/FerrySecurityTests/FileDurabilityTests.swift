import FerrySecurity
import Foundation
import Testing

@Suite("FileDurability")
struct FileDurabilityTests {
    @Test("a write handed to the disk early reads back whole once synced, and its folder syncs too")
    func writebackThenSync() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "ferry-durability-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "upload")
        let bytes = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        var offset: Int64 = 0
        for piece in stride(from: 0, to: bytes.count, by: 1 << 20) {
            let chunk = bytes[piece..<min(piece + (1 << 20), bytes.count)]
            try handle.write(contentsOf: chunk)
            FileDurability.startWriteback(handle.fileDescriptor, offset: offset, length: Int64(chunk.count))
            offset += Int64(chunk.count)
        }
        try handle.close()
        try FileDurability.synchronize(file.path)
        try FileDurability.synchronizeFolder(folder.path)
        #expect(try Data(contentsOf: file) == bytes)
    }

    @Test("syncing a path that is not there throws ENOENT; a head start on a closed descriptor does nothing")
    func failures() throws {
        let missing = FileManager.default.temporaryDirectory.appending(path: "ferry-durability-missing-\(UUID().uuidString)").path
        #expect(throws: POSIXError(.ENOENT)) { try FileDurability.synchronize(missing) }
        FileDurability.startWriteback(-1, offset: 0, length: 4096)  // EBADF, ignored: it is only a head start
    }
}
