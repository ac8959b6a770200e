import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Prometheus

extension HTTPField.Name {
    /// `X-Content-Type-Options`.
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
}

/// A blob's bytes as an HTTP response, streamed, whole (200) or one range (206): for the sync API's blob downloads
/// and Storage's object downloads alike.
enum BlobResponse {
    /// - Parameters:
    ///   - bytes: the blob's bytes from `range.start` (or 0) on.
    ///   - pacer: waits, after each chunk, until the connection has taken it.
    static func make(
        size: Int64, range: ByteRange?, bytes: any AsyncSequence<ByteBuffer, any Error> & Sendable, contentType: String,
        eTag: String, cacheControl: String, sent: Counter, pacer: WritePacer, extraHeaders: HTTPFields = [:]
    ) -> Response {
        let start = range?.start ?? 0
        let end = (range?.end.map { min($0, size - 1) } ?? (size - 1)) + 1
        var headers = extraHeaders
        headers[.contentType] = contentType
        headers[.contentLength] = "\(max(0, end - start))"
        headers[.eTag] = "\"\(eTag)\""
        headers[.acceptRanges] = "bytes"
        headers[.cacheControl] = cacheControl
        // User content never runs as this server's page: no type sniffing, no scripts, no frames, no requests.
        headers[.xContentTypeOptions] = "nosniff"
        headers[.contentSecurityPolicy] = "default-src 'none'; sandbox"
        if range != nil { headers[.contentRange] = "bytes \(start)-\(max(start, end) - 1)/\(size)" }
        return Response(status: range == nil ? .ok : .partialContent, headers: headers, body: ResponseBody { writer in
            var remaining = end - start
            for try await var buffer in bytes {
                if remaining <= 0 { break }
                if buffer.readableBytes > remaining { buffer = buffer.getSlice(at: buffer.readerIndex, length: Int(remaining))! }
                remaining -= Int64(buffer.readableBytes)
                sent.increment(by: Int64(buffer.readableBytes))
                try await writer.write(buffer)
                try await pacer.waitUntilTaken()
            }
            try await writer.finish(nil)
        })
    }
}

/// Backpressure for a streamed response. Hummingbird's body writer hands each chunk to the connection's event loop and
/// returns at once; the connection turns unwritable only once the loop has run those writes, so a reader that takes
/// nothing would let a fast producer queue the whole file in memory. After each chunk the pacer asks the loop, behind the
/// writes already queued, whether the connection can take more, and waits until it can: a stalled reader holds about
/// one chunk. A reader that takes nothing for `stallTimeout` has its connection closed.
struct WritePacer: Sendable {
    let channel: any Channel
    let stallTimeout: Duration

    func waitUntilTaken() async throws {
        let channel = self.channel
        var waited = Duration.zero
        var pause = Duration.milliseconds(1)
        while try await !channel.eventLoop.submit({ channel.isWritable }).get() {
            guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
            guard waited < stallTimeout else {
                channel.close(promise: nil)
                throw ChannelError.ioOnClosedChannel
            }
            try await Task.sleep(for: pause)
            waited += pause
            pause = min(pause * 2, .milliseconds(100))
        }
    }
}
