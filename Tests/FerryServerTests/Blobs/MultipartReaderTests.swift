@testable import FerryServer
import Foundation
import NIOCore
import Testing

/// The multipart reader keeps the file part's bytes exactly, however the body is cut into buffers, and refuses bodies
/// that are not what storage3, supabase-js and supabase-swift send, at little cost.
@Suite("Multipart reader")
struct MultipartReaderTests {
    static let boundary = "----ferry-boundary-7d3"

    static func body(_ parts: [(head: String, bytes: [UInt8])], preamble: String = "", close: Bool = true) -> [UInt8] {
        var body = Array(preamble.utf8)
        for part in parts {
            body += Array("--\(boundary)\r\n\(part.head)\r\n\r\n".utf8) + part.bytes + Array("\r\n".utf8)
        }
        if close { body += Array("--\(boundary)--\r\n".utf8) }
        return body
    }

    /// Reads `body` cut into buffers of `step` bytes; the file's bytes and content type, or the error.
    static func read(_ body: [UInt8], step: Int) throws -> (bytes: [UInt8], type: String?) {
        var reader = MultipartReader(boundary: boundary)
        var out: [UInt8] = []
        var index = 0
        while index < body.count {
            let end = min(body.count, index + step)
            try reader.append(ByteBuffer(bytes: body[index..<end]))
            while let bytes = reader.nextFileBytes() { out += bytes.readableBytesView }
            index = end
        }
        try reader.finish()
        return (out, reader.fileContentType)
    }

    @Test("the file part comes out whole, other parts are dropped, at any buffer size", arguments: [1, 2, 3, 7, 64, 1000, 1 << 20])
    func fileBytes(step: Int) throws {
        // File bytes that nearly look like the delimiter, to catch a match split across buffers.
        let file = Array("--\(Self.boundary)\r\n-".utf8) + (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) } + Array("\r\n--\(Self.boundary.dropLast())".utf8)
        let body = Self.body([
            (#"Content-Disposition: form-data; name="cacheControl""#, Array("3600".utf8)),
            ("Content-Disposition: form-data; name=\"file\"; filename=\"a.m4a\"\r\nContent-Type: audio/mp4", file),
            (#"Content-Disposition: form-data; name="metadata""#, Array("{}".utf8)),
        ], preamble: "ignored preamble\r\n")
        let read = try Self.read(body, step: step)
        #expect(read.bytes == file)
        #expect(read.type == "audio/mp4")
    }

    @Test("a body without a file part, cut short, or with oversized parts is refused", arguments: 0..<5)
    func refusals(_ index: Int) {
        let bodies: [[UInt8]] = [
            Self.body([(#"Content-Disposition: form-data; name="cacheControl""#, Array("3600".utf8))]),
            Self.body([("Content-Disposition: form-data; name=\"file\"; filename=\"a\"", Array("abc".utf8))], close: false),
            Array("--\(Self.boundary)\r\nX-Big: ".utf8) + [UInt8](repeating: 97, count: 100_000),
            Self.body([(#"Content-Disposition: form-data; name="other""#, [UInt8](repeating: 98, count: 2 << 20))]),
            Array("--\(Self.boundary)garbage\r\n\r\n".utf8),
        ]
        #expect(throws: MultipartFileError.self) { try Self.read(bodies[index], step: 4096) }
    }

    @Test("10 MiB of file reads in well under a second")
    func fast() throws {
        let file = [UInt8](repeating: 13, count: 10 << 20)
        let body = Self.body([("Content-Disposition: form-data; name=\"file\"; filename=\"a\"", file)])
        // Wall time, bounded far above what the reader takes (milliseconds) and far below what the old parser took
        // (6.4 s of CPU for 10 MiB), so a loaded machine cannot fail it.
        let start = ContinuousClock.now
        let read = try Self.read(body, step: 64 * 1024)
        let elapsed = ContinuousClock.now - start
        #expect(read.bytes.count == file.count)
        #expect(elapsed < .seconds(3), "\(elapsed)")
    }
}
