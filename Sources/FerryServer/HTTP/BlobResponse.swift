import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Prometheus

/// A blob's bytes as an HTTP response, streamed, whole (200) or one range (206): for the sync API's blob downloads
/// and Storage's object downloads alike.
enum BlobResponse {
    /// - Parameters:
    ///   - bytes: the blob's bytes from `range.start` (or 0) on.
    static func make(
        size: Int64, range: ByteRange?, bytes: any AsyncSequence<ByteBuffer, any Error> & Sendable, contentType: String,
        eTag: String, cacheControl: String, sent: Counter, extraHeaders: HTTPFields = [:]
    ) -> Response {
        let start = range?.start ?? 0
        let end = (range?.end.map { min($0, size - 1) } ?? (size - 1)) + 1
        var headers = extraHeaders
        headers[.contentType] = contentType
        headers[.contentLength] = "\(max(0, end - start))"
        headers[.eTag] = "\"\(eTag)\""
        headers[.acceptRanges] = "bytes"
        headers[.cacheControl] = cacheControl
        if range != nil { headers[.contentRange] = "bytes \(start)-\(max(start, end) - 1)/\(size)" }
        return Response(status: range == nil ? .ok : .partialContent, headers: headers, body: ResponseBody { writer in
            var remaining = end - start
            for try await var buffer in bytes {
                if remaining <= 0 { break }
                if buffer.readableBytes > remaining { buffer = buffer.getSlice(at: buffer.readerIndex, length: Int(remaining))! }
                remaining -= Int64(buffer.readableBytes)
                sent.increment(by: Int64(buffer.readableBytes))
                try await writer.write(buffer)
            }
            try await writer.finish(nil)
        })
    }
}
