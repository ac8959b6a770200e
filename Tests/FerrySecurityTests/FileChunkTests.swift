import FerrySecurity
import Foundation
import Testing

@Suite("FileHandle.readChunk")
struct FileChunkTests {
    @Test("a file reads back in whole chunks from the current offset, the last one short, then nil; an empty file is nil at once")
    func chunks() throws {
        let file = FileManager.default.temporaryDirectory.appending(path: "ferry-chunks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let bytes = Data((0..<((9 << 20) + 123)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
        try bytes.write(to: file)
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var sizes: [Int] = []
        var read = Data()
        while let chunk = try handle.readChunk(upToCount: 4 << 20) {
            sizes.append(chunk.count)
            read.append(chunk)
        }
        #expect(sizes == [4 << 20, 4 << 20, (1 << 20) + 123])
        #expect(read == bytes)

        try handle.seek(toOffset: 5)
        #expect(try handle.readChunk(upToCount: 3) == bytes[5..<8])
        #expect(try handle.readChunk(upToCount: 1 << 30)?.count == bytes.count - 8, "a chunk larger than the rest is the rest")

        let empty = FileManager.default.temporaryDirectory.appending(path: "ferry-chunks-empty-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: empty) }
        try Data().write(to: empty)
        let emptyHandle = try FileHandle(forReadingFrom: empty)
        defer { try? emptyHandle.close() }
        #expect(try emptyHandle.readChunk(upToCount: 4096) == nil)
    }

    @Test("from a pipe written in small pieces, a chunk waits to be full (or for the end), not for the first piece")
    func pipe() throws {
        let pipe = Pipe()
        let writer = Thread {
            for piece in 0..<10 { pipe.fileHandleForWriting.write(Data(repeating: UInt8(piece), count: 1000)) }
            try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        let first = try #require(try pipe.fileHandleForReading.readChunk(upToCount: 4000))
        #expect(first == Data((0..<4).flatMap { Data(repeating: UInt8($0), count: 1000) }))
        let rest = try #require(try pipe.fileHandleForReading.readChunk(upToCount: 1 << 20))
        #expect(rest.count == 6000, "the end of the pipe ends the chunk")
        #expect(try pipe.fileHandleForReading.readChunk(upToCount: 10) == nil)
    }

    @Test("a file open only for writing throws EBADF instead of reading as the end")
    func writeOnly() throws {
        let file = FileManager.default.temporaryDirectory.appending(path: "ferry-chunks-write-only-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("bytes".utf8).write(to: file)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        #expect(throws: POSIXError(.EBADF)) { try handle.readChunk(upToCount: 10) }
    }
}
