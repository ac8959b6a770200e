import NIOCore

/// A blob store's upload body in tests: the bytes in pieces, as a request body arrives.
enum UploadBody {
    /// `bytes` in pieces of `piece` bytes (smaller than a PostgreSQL part by default).
    static func pieces(_ bytes: ArraySlice<UInt8>, of piece: Int = 300_000) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            var start = bytes.startIndex
            while start < bytes.endIndex {
                let end = min(start + piece, bytes.endIndex)
                continuation.yield(ByteBuffer(bytes: bytes[start..<end]))
                start = end
            }
            continuation.finish()
        }
    }

    /// The first `delivered` of `bytes` in 64 KiB pieces, then the connection dropping (a `CancellationError`).
    static func brokenOff(_ bytes: [UInt8], after delivered: Int) -> AsyncThrowingStream<ByteBuffer, any Error> {
        AsyncThrowingStream { continuation in
            for start in stride(from: 0, to: delivered, by: 65_536) {
                continuation.yield(ByteBuffer(bytes: bytes[start..<min(start + 65_536, delivered)]))
            }
            continuation.finish(throwing: CancellationError())
        }
    }
}
