import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import Synchronization

extension Request {
    /// The JSON body decoded as `Body`, at most `limit` bytes; a clear 400 or 413 otherwise.
    ///
    /// The body is parsed in one linear pass with nesting bounded to ``JSONValue/defaultMaximumDepth`` levels, then
    /// decoded from the tree, within the request deadline (``RequestDeadline``): parsing stops when it passes.
    /// - Parameter invalidValue: the error for a value that is present but invalid at a coding path (say, an unknown
    ///   enum case), when that deserves a more precise answer than 400 `bad_request`.
    mutating func decodeJSON<Body: Decodable & Sendable>(
        _ type: Body.Type, limit: Int = 64 * 1024, invalidValue: (_ path: String) -> APIError? = { _ in nil }
    ) async throws -> Body {
        try await decodeJSON(limit: limit, invalidValue: invalidValue) { try JSONValueDecoder().decode(Body.self, from: $0) }
    }

    /// The JSON body decoded as `Body`, or `nil` when the request has no body (an optional one, as
    /// `DELETE /auth/v1/user`'s); as above otherwise.
    mutating func decodeJSONIfPresent<Body: Decodable & Sendable>(_ type: Body.Type, limit: Int = 64 * 1024) async throws -> Body? {
        try await decodeJSON(limit: limit, invalidValue: { _ in nil }) { $0.isEmpty ? nil : try JSONValueDecoder().decode(Body.self, from: $0) }
    }

    /// A sync message (a push) read from the body by its one reader, at most `limit` bytes; as above otherwise.
    mutating func decodeJSON<Body: JSONStreamReadable & Sendable>(
        _ type: Body.Type, limit: Int, invalidValue: (_ path: String) -> APIError? = { _ in nil }
    ) async throws -> Body {
        try await decodeJSON(limit: limit, invalidValue: invalidValue) { try JSONValueDecoder().decode(Body.self, from: $0) }
    }

    private mutating func decodeJSON<Body: Sendable>(
        limit: Int, invalidValue: (_ path: String) -> APIError?, reading read: @escaping @Sendable (ByteBufferView) throws -> Body
    ) async throws -> Body {
        // A body declared larger than the limit is refused before a byte of it is awaited.
        if let declared = declaredLength, declared > limit { throw Self.tooLarge(limit) }
        let buffer: ByteBuffer
        let progress = RequestDeadline.progress
        // Cleared only once the body is in: when the deadline cancels the read, the flag must still say so.
        progress?.isReadingBody.store(true, ordering: .sequentiallyConsistent)
        do {
            if progress != nil {
                // In a DeadlineGroup the request's deadline already bounds the body (408 while it arrives) and then
                // the work: a race of its own here would cost a task and a timer more per request.
                buffer = try await collectBody(upTo: limit)
            } else {
                // The body arrives within the deadline too: a client trickling it cannot hold the request open.
                buffer = try await withTimeout(RequestDeadline.duration) { [self] in
                    var request = self
                    return try await request.collectBody(upTo: limit)
                }
            }
        } catch is TimeoutError {
            throw RequestDeadline.bodyTimedOut
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw Self.tooLarge(limit)
        } catch let error as HTTPParserError where error != .invalidEOFState {
            // A client that hangs up mid-body (`invalidEOFState`) is an aborted request, as ErrorMiddleware says.
            throw APIError(.badRequest, .badRequest, "The request body is malformed: its chunked encoding or its length does not parse.")
        }
        progress?.bodyArrived(duration: RequestDeadline.duration)
        do {
            if progress != nil { return try read(buffer.readableBytesView) }
            return try await withTimeout(RequestDeadline.duration) { try read(buffer.readableBytesView) }
        } catch let error as JSONParseError {
            throw APIError(.badRequest, .badRequest, "The request body is not the expected JSON: \(error).")
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, !context.codingPath.isEmpty,
               let refined = invalidValue(context.codingPath.map(\.stringValue).joined(separator: ".")) {
                throw refined
            }
            throw APIError(.badRequest, .badRequest, "The request body is not the expected JSON: \(error.summary).")
        } catch is TimeoutError {
            // Only an overloaded server takes this long over a body within its limit.
            throw APIError(.serviceUnavailable, .unavailable, "The server could not read the request in time; retry shortly.", headers: [.retryAfter: "5"])
        }
    }
}

extension Request {
    /// The body's length as its `Content-Length` declares it; `nil` for a chunked body.
    var declaredLength: Int64? { headers[.contentLength].flatMap(Int64.init) }

    /// Refuses an upload's body whose declared length passes the `remaining` bytes its upload has left, before a byte of
    /// it is read: nothing is stored, and the upload stays where it stood (one that passes it as it arrives is discarded).
    func refuseDeclaredLength(over remaining: Int64) throws {
        if let declared = declaredLength, declared > remaining {
            throw APIError(
                .contentTooLarge, .payloadTooLarge,
                "The body declares \(declared) bytes, more than the \(max(remaining, 0)) the upload has left after Upload-Offset; nothing was stored."
            )
        }
    }

    static func tooLarge(_ limit: Int) -> APIError {
        APIError(.contentTooLarge, .payloadTooLarge, "The request body is larger than \(limit / 1024) KiB.")
    }
}

extension DecodingError {
    /// Which key is missing or mistyped, without echoing the body (it may hold a password).
    var summary: String {
        // Each step cut to 40 characters: a key the client made up (a cursor's space id) is echoed, not its whole text.
        func path(_ context: Context) -> String {
            context.codingPath.map { String($0.stringValue.prefix(40)) }.joined(separator: ".")
        }
        switch self {
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "missing \(parent.isEmpty ? key.stringValue : parent + "." + key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type for \(path(context).isEmpty ? "the body" : path(context))"
        case .dataCorrupted(let context):
            return path(context).isEmpty ? "a value is not of the expected form (say, a key that is not a UUID)" : "invalid value for \(path(context))"
        @unknown default:
            return "unreadable"
        }
    }
}
