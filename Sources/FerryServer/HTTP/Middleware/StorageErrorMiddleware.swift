import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// Renders the errors of `/storage/v1` in Supabase Storage's shape, `{"statusCode": "404", "error": "not_found",
/// "code": "not_found", "message": "…"}`, which storage3, supabase-js and supabase-swift parse.
struct StorageErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return Self.response(ErrorMiddleware<Context>.apiError(for: error, request, context))
        }
    }

    static func response(_ error: APIError) -> Response {
        var headers = error.headers
        headers[.contentType] = "application/json; charset=utf-8"
        var body = error.details
        body["statusCode"] = .string("\(error.status.code)")
        body["error"] = .string(error.code.rawValue)
        body["code"] = .string(error.code.rawValue)
        body["message"] = .string(error.message)
        return Response(status: error.status, headers: headers, body: .init(byteBuffer: .init(string: JSONValue.object(body).jsonText)))
    }
}
