import Foundation
import MultipartKit
import NIOCore

/// The bytes of the file part of a `multipart/form-data` body, as they arrive (storage3 and supabase-js send the file
/// in a part named `file`, or the only part with a filename). Other parts (cacheControl, metadata) are small and
/// skipped. One buffer of the body is held at a time.
struct MultipartFile<Body: AsyncSequence & Sendable>: AsyncSequence, Sendable where Body.Element == ByteBuffer {
    let body: Body
    /// The parser and what it saw; after the bytes are read, ``MultipartFileState/contentType`` is the file part's type.
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
                if !state.pending.isEmpty { return state.pending.removeFirst() }
                guard let buffer = try await body.next() else {
                    guard state.sawFile else { throw MultipartFileError.noFile }
                    return nil
                }
                try state.parser.execute(buffer)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(body: body.makeAsyncIterator(), state: state)
    }
}

/// The parser of one multipart body and what its callbacks collected. Unchecked `Sendable`: one request's task uses
/// it, first while reading the body, then to read the file part's content type.
final class MultipartFileState: @unchecked Sendable {
    let parser: MultipartParser
    var headers: [(String, String)] = []
    var isFilePart = false
    var sawFile = false
    var pending: [ByteBuffer] = []
    /// The file part's `Content-Type`, once its first bytes arrived.
    var contentType: String?

    init(boundary: String) {
        parser = MultipartParser(boundary: boundary)
        parser.onHeader = { [unowned self] name, value in headers.append((name.lowercased(), value)) }
        parser.onBody = { [unowned self] buffer in
            if !isFilePart, !sawFile, headers.contains(where: { $0.0 == "content-disposition" && Self.isFile($0.1) }) {
                isFilePart = true
                sawFile = true
                contentType = headers.first { $0.0 == "content-type" }?.1
            }
            if isFilePart { pending.append(buffer) }
        }
        parser.onPartComplete = { [unowned self] in
            headers = []
            isFilePart = false
        }
    }

    static func isFile(_ disposition: String) -> Bool {
        disposition.contains("filename=") || disposition.contains("name=\"file\"")
    }
}

/// A multipart body without a file part.
enum MultipartFileError: Error {
    case noFile
}
