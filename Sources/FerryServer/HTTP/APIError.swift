import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// An error a route throws on purpose: an HTTP status, a stable machine code and a message.
///
/// It renders as ``ErrorBody`` JSON, the same shape on every endpoint.
public struct APIError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: ErrorCode
    public var message: String
    /// Extra response headers, such as `Retry-After`.
    public var headers: HTTPFields

    /// Creates an API error.
    public init(_ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        let body = ErrorBody(code: Int(status.code), errorCode: code, msg: message)
        let data = (try? Self.encoder.encode(body)) ?? Data(#"{"code":500,"error_code":"unexpected_failure","msg":"error"}"#.utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
