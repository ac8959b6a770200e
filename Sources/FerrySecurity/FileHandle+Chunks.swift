import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension FileHandle {
    /// Up to `count` bytes from the file's current offset, read straight into one buffer; `nil` at the end.
    ///
    /// Foundation's `read(upToCount:)` on Linux reads a regular file one block (4 KiB) per call and grows its buffer
    /// as it goes: 1,024 calls, and as many copies, for each 4 MiB chunk of a file being attached, hashed or uploaded.
    /// This asks for the whole chunk and only loops on a short read (a pipe, a signal).
    package func readChunk(upToCount count: Int) throws -> Data? {
        precondition(count > 0, "a chunk holds at least one byte")
        var chunk = Data(count: count)
        let filled = try chunk.withUnsafeMutableBytes { buffer in
            try readFully(fileDescriptor, into: buffer)
        }
        guard filled > 0 else { return nil }
        if filled < count { chunk.count = filled }
        return chunk
    }
}

/// Reads into `buffer` until it is full or the file ends; the bytes read.
private func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard let start = buffer.baseAddress else { return 0 }
    var filled = 0
    while filled < buffer.count {
        let got = read(descriptor, start + filled, buffer.count - filled)
        if got > 0 {
            filled += got
        } else if got == 0 {
            break
        } else if errno != EINTR {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }
    return filled
}
