import Foundation
import NIOCore

/// The bytes of the file part of a `multipart/form-data` body, as they arrive (storage3 and supabase-js send the file
/// in a part named `file`, or the first part with a filename). Other parts (cacheControl, metadata) are read and
/// dropped. It holds at most one buffer of the body, a part's head (≤ ``MultipartReader/maximumHeadBytes``) and a
/// boundary's length of look-behind; the other parts may carry ``MultipartReader/maximumOtherBytes`` in all.
struct MultipartFile<Body: AsyncSequence & Sendable>: AsyncSequence, Sendable where Body.Element == ByteBuffer {
    let body: Body
    /// What the reader saw; after the bytes are read, ``MultipartFileState/contentType`` is the file part's type.
    let state: MultipartFileState

    init(body: Body, boundary: String) {
        self.body = body
        self.state = MultipartFileState(boundary: boundary)
    }

    /// The boundary of a `multipart/form-data` content type, or `nil` for any other type.
    static func boundary(of contentType: String?) -> String? {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                let value = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                return value.isEmpty || value.utf8.count > 200 ? nil : value
            }
        }
        return nil
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var body: Body.AsyncIterator
        let state: MultipartFileState

        mutating func next() async throws -> ByteBuffer? {
            while true {
                if let bytes = state.reader.nextFileBytes() { return bytes }
                guard let buffer = try await body.next() else {
                    try state.reader.finish()
                    return nil
                }
                try state.reader.append(buffer)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(body: body.makeAsyncIterator(), state: state)
    }
}

/// The reader of one multipart body. Unchecked `Sendable`: one request's task uses it, first while reading the body,
/// then to read the file part's content type.
final class MultipartFileState: @unchecked Sendable {
    var reader: MultipartReader

    init(boundary: String) {
        reader = MultipartReader(boundary: boundary)
    }

    /// The file part's `Content-Type`, once its head was read.
    var contentType: String? { reader.fileContentType }
}

/// Why a multipart body was refused.
enum MultipartFileError: Error, Equatable {
    /// The body ended with no file part.
    case noFile
    /// The body is not `multipart/form-data` with its boundary, or ends before its closing delimiter.
    case malformed(String)
}

/// A streaming `multipart/form-data` reader (RFC 7578) that keeps the first file part's bytes and drops the rest.
/// Boundaries are found with Boyer–Moore–Horspool, so a part costs about what copying it does.
struct MultipartReader {
    /// The most a part's head (its header lines) may take.
    static let maximumHeadBytes = 16 * 1024
    /// The most the parts other than the file may carry in all.
    static let maximumOtherBytes = 1 << 20

    private enum Phase {
        /// Before the first delimiter: the preamble, dropped.
        case preamble
        /// After a delimiter: `--` ends the body, CR LF starts a part's head.
        case afterDelimiter
        case head
        case body(isFile: Bool)
        case done
    }

    /// `CR LF -- boundary`; the first delimiter may come without its CR LF.
    private let delimiter: [UInt8]
    private var phase = Phase.preamble
    private var pending = ByteBuffer()
    private var output: [ByteBuffer] = []
    private var sawFile = false
    private var otherBytes = 0
    private(set) var fileContentType: String?

    private let delimiterSkips: [Int]

    init(boundary: String) {
        delimiter = Array("\r\n--\(boundary)".utf8)
        delimiterSkips = Self.skips(for: delimiter)
        // The preamble is searched for as if it followed a line break, so a body that starts with the delimiter matches.
        pending.writeBytes([13, 10])
    }

    /// The next bytes of the file part, if any are ready.
    mutating func nextFileBytes() -> ByteBuffer? {
        output.isEmpty ? nil : output.removeFirst()
    }

    mutating func append(_ buffer: ByteBuffer) throws {
        var buffer = buffer
        pending.writeBuffer(&buffer)
        try advance()
        // What is left (a boundary's length, or part of a head) moves to a buffer of its own: the file bytes handed out
        // are slices of this one, so writing more into it would copy it whole.
        if pending.readerIndex > 0 {
            var rest = ByteBufferAllocator().buffer(capacity: max(pending.readableBytes, 256))
            rest.writeBuffer(&pending)
            pending = rest
        }
    }

    /// The body ended: it must have closed with its final delimiter and held a file part.
    mutating func finish() throws {
        guard case .done = phase else { throw MultipartFileError.malformed("the multipart body ends before its closing boundary") }
        guard sawFile else { throw MultipartFileError.noFile }
    }

    private mutating func advance() throws {
        while true {
            switch phase {
            case .done:
                pending.moveReaderIndex(to: pending.writerIndex)
                return
            case .preamble:
                guard let found = find(delimiter) else {
                    pending.moveReaderIndex(forwardBy: max(0, pending.readableBytes - (delimiter.count - 1)))
                    return
                }
                pending.moveReaderIndex(forwardBy: found + delimiter.count)
                phase = .afterDelimiter
            case .afterDelimiter:
                guard pending.readableBytes >= 2 else { return }
                let next = pending.getBytes(at: pending.readerIndex, length: 2)!
                if next == [45, 45] {
                    phase = .done
                } else {
                    // Transport padding (spaces, tabs) may follow a delimiter before its line break.
                    guard let lineEnd = find([13, 10]) else {
                        guard pending.readableBytes <= 256 else { throw MultipartFileError.malformed("a boundary line is not followed by a line break") }
                        return
                    }
                    let padding = pending.getBytes(at: pending.readerIndex, length: lineEnd)!
                    guard padding.allSatisfy({ $0 == 32 || $0 == 9 }) else { throw MultipartFileError.malformed("a boundary line has text after it") }
                    pending.moveReaderIndex(forwardBy: lineEnd + 2)
                    phase = .head
                }
            case .head:
                guard let end = startsWithLineBreak ? -2 : find([13, 10, 13, 10]) else {
                    guard pending.readableBytes <= Self.maximumHeadBytes else {
                        throw MultipartFileError.malformed("a part's headers exceed \(Self.maximumHeadBytes) bytes")
                    }
                    return
                }
                guard end <= Self.maximumHeadBytes else { throw MultipartFileError.malformed("a part's headers exceed \(Self.maximumHeadBytes) bytes") }
                let head = end > 0 ? pending.getString(at: pending.readerIndex, length: end) ?? "" : ""
                pending.moveReaderIndex(forwardBy: end + 4)
                let headers = Self.headers(head)
                let isFile = !sawFile && headers["content-disposition"].map(Self.isFile) == true
                if isFile {
                    sawFile = true
                    fileContentType = headers["content-type"]
                }
                phase = .body(isFile: isFile)
            case .body(let isFile):
                let found = find(delimiter)
                let take = found ?? max(0, pending.readableBytes - (delimiter.count - 1))
                if take > 0 {
                    let bytes = pending.readSlice(length: take)!
                    if isFile {
                        output.append(bytes)
                    } else {
                        otherBytes += take
                        guard otherBytes <= Self.maximumOtherBytes else {
                            throw MultipartFileError.malformed("the parts other than the file exceed \(Self.maximumOtherBytes) bytes")
                        }
                    }
                }
                guard found != nil else { return }
                pending.moveReaderIndex(forwardBy: delimiter.count)
                phase = .afterDelimiter
            }
        }
    }

    /// A head with no header lines: the part's CR LF CR LF begins right where the head does (less its first CR LF).
    private var startsWithLineBreak: Bool {
        pending.readableBytes >= 2 && pending.getBytes(at: pending.readerIndex, length: 2) == [13, 10]
    }

    /// Where `pattern` first starts in the readable bytes, relative to the reader index.
    private func find(_ pattern: [UInt8]) -> Int? {
        let skips = pattern == delimiter ? delimiterSkips : Self.skips(for: pattern)
        return pending.withUnsafeReadableBytes { bytes -> Int? in
            Self.search(pattern, in: bytes, skips: skips)
        }
    }

    /// Horspool's shift table: how far the window may move when its last byte is `byte`.
    private static func skips(for pattern: [UInt8]) -> [Int] {
        var table = Array(repeating: pattern.count, count: 256)
        for (index, byte) in pattern.dropLast().enumerated() { table[Int(byte)] = pattern.count - 1 - index }
        return table
    }

    /// Boyer–Moore–Horspool: the window jumps by up to the pattern's length, so a boundary of 40 bytes is found in
    /// about a fortieth of the comparisons a byte-by-byte scan makes, whatever the file holds.
    static func search(_ pattern: [UInt8], in bytes: UnsafeRawBufferPointer, skips: [Int]) -> Int? {
        let last = pattern.count - 1
        var start = 0
        while start + last < bytes.count {
            let tail = bytes[start + last]
            if tail == pattern[last] {
                var index = last - 1
                while index >= 0, bytes[start + index] == pattern[index] { index -= 1 }
                if index < 0 { return start }
            }
            start += skips[Int(tail)]
        }
        return nil
    }

    /// A part's header lines, by lowercase name.
    static func headers(_ head: String) -> [String: String] {
        var headers: [String: String] = [:]
        for line in head.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }

    static func isFile(_ disposition: String) -> Bool {
        disposition.contains("filename=") || disposition.contains("name=\"file\"")
    }
}
