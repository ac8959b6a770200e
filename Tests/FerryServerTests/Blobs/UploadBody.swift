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
}
