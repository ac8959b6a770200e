import FerryCore
import HTTPTypes
import Hummingbird
import NIOCore

/// A JSON response: a sync message written by its one writer (``JSONTextWritable``), or any other `Encodable` value.
struct JSONResponse: ResponseGenerator {
    private let write: @Sendable () throws -> [UInt8]
    var status: HTTPResponse.Status
    /// Header fields beside the content type (a list's `X-Total-Count`).
    var headers: HTTPFields = [:]

    init(_ value: some Encodable & Sendable, status: HTTPResponse.Status = .ok) {
        self.write = { try JSONValueEncoder().encodeText(value) }
        self.status = status
    }

    init(_ message: some JSONTextWritable & Sendable, status: HTTPResponse.Status = .ok) {
        self.write = { JSONValueEncoder().encodeText(message) }
        self.status = status
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(
            status: status,
            headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: try write()))
        )
    }
}
