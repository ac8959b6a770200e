import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// An error a route throws on purpose: an HTTP status, a stable machine code and a message.
///
/// It renders as ``ErrorBody`` JSON, `{"code": 404, "error_code": "not_found", "msg": "…"}`, on every endpoint.
/// A client that sends `X-Supabase-Api-Version: 2024-01-01` or later (supabase-swift, recent supabase-js) gets
/// GoTrue's newer shape instead, `{"code": "not_found", "message": "…"}`, as GoTrue does.
public struct APIError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: ErrorCode
    public var message: String
    /// Extra response headers, such as `Retry-After`.
    public var headers: HTTPFields
    /// Extra members of the body, such as `weak_password: {reasons: […]}`.
    public var details: [String: JSONValue]

    /// Creates an API error.
    public init(
        _ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String,
        headers: HTTPFields = [:], details: [String: JSONValue] = [:]
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.details = details
    }

    /// The answer to a service's refusal, its status from ``status(of:)``.
    init(_ error: ServiceError) {
        let status = Self.status(of: error.kind)
        var headers = HTTPFields()
        if let retryAfter = error.retryAfter { headers[.retryAfter] = "\(max(1, retryAfter.components.seconds))" }
        for (name, value) in error.headers {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        self.init(status, error.code, error.message, headers: headers, details: error.details)
    }

    /// The one table from ``ServiceError/Kind`` to HTTP statuses.
    static func status(of kind: ServiceError.Kind) -> HTTPResponse.Status {
        switch kind {
        case .invalidRequest: .badRequest
        case .unauthenticated: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .notAcceptable: .notAcceptable
        case .timedOut: .requestTimeout
        case .conflict: .conflict
        case .gone: .gone
        case .preconditionFailed: .preconditionFailed
        case .tooLarge: .contentTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .rangeNotSatisfiable: .rangeNotSatisfiable
        case .unprocessable: .unprocessableContent
        case .rateLimited: .tooManyRequests
        case .internalFailure: .internalServerError
        case .upstreamFailed: .badGateway
        case .unavailable: .serviceUnavailable
        }
    }

    /// The first API version whose errors carry the machine code in `code`.
    static let namedCodesVersion = "2024-01-01"

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        var body = details
        if let version = request.headers[.supabaseAPIVersion], version >= Self.namedCodesVersion {
            headers[.supabaseAPIVersion] = version
            body["code"] = .string(code.rawValue)
            body["message"] = .string(message)
        } else {
            body["code"] = .number(Double(status.code))
            body["error_code"] = .string(code.rawValue)
            body["msg"] = .string(message)
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: JSONValue.object(body).jsonText)))
    }
}

extension HTTPField.Name {
    /// `X-Supabase-Api-Version`, which selects GoTrue's error shape.
    static let supabaseAPIVersion = Self("X-Supabase-Api-Version")!
}
