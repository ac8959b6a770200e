import FerryCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
#if canImport(Glibc)
import Glibc
#endif

/// Turns every error into an ``ErrorBody`` JSON response, so no client ever sees a bare status or
/// a stack trace. A database that is down answers 503 (retry); errors the server did not expect become 500,
/// logged with the request id.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Keeps the errors answered for the console's live tail.
    var tail: ErrorTail?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError = Self.apiError(for: error, request, context)
            tail?.record(
                method: request.method.rawValue, path: request.uri.path, status: Int(apiError.status.code), code: apiError.code,
                message: apiError.message
            )
            return try Self.response(apiError, request, context)
        }
    }

    /// The error in the shape of the API its path names. Routes of `/storage/v1` and `/rest/v1` render their own
    /// errors (``StorageErrorMiddleware``, ``TableErrorMiddleware``); a path under them that matched no route arrives
    /// here, and storage3 and postgrest-py parse only their API's shape.
    static func response(_ error: APIError, _ request: Request, _ context: Context) throws -> Response {
        let path = request.uri.path
        if path.hasPrefix("/storage/v1/") {
            return StorageErrorMiddleware<Context>.response(error)
        }
        if path.hasPrefix("/rest/v1/") {
            return TableErrorMiddleware<Context>.response(unmatched: error, path: path)
        }
        return try error.response(from: request, context: context)
    }

    /// The API error any thrown error stands for, logging those the server did not expect: the one rule behind this
    /// middleware and Storage's (``StorageErrorMiddleware``), which renders it in another shape.
    static func apiError(for error: any Error, _ request: Request, _ context: Context) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as ServiceError:
            return APIError(error)
        case let error as HTTPError:
            return translate(error, request)
        case _ where StorageAvailability.isInvalidData(error):
            return APIError(.badRequest, .validationFailed, "A value in the request cannot be stored (invalid text or number).")
        case _ where isAbortedByClient(error):
            // The client went away mid-request (closed the connection, or its body ended early): nothing failed here.
            context.logger.debug("request aborted by the client", metadata: ["ferry.error": "\(String(reflecting: type(of: error)))"])
            return APIError(.badRequest, .requestAborted, "The request ended before its body was complete.")
        case _ where StorageAvailability.isDeadline(error):
            // The request's deadline passed: the database may be slow, or the server busy (hashing passwords, say).
            context.logger.warning("request deadline passed")
            return APIError(.serviceUnavailable, .unavailable, "The server did not finish this request in time; retry shortly.", headers: [.retryAfter: "5"])
        case _ where StorageAvailability.isUnavailable(error):
            context.logger.warning("database unavailable", metadata: ["ferry.error": "\(String(reflecting: type(of: error)))"])
            return APIError(.serviceUnavailable, .unavailable, "The database is not answering; retry shortly.", headers: [.retryAfter: "5"])
        default:
            context.logger.error("unexpected failure", metadata: ["ferry.error": "\(StorageAvailability.summary(error))"])
            return APIError(.internalServerError, .internalError, "The server failed; quote the X-Request-Id header when reporting it.")
        }
    }

    /// Whether reading the request failed because the client aborted it: the decoder met the connection's end inside
    /// a body, or the connection was closed or reset under the handler.
    static func isAbortedByClient(_ error: any Error) -> Bool {
        switch error {
        case is HTTPParserError:
            return true
        case let error as ChannelError:
            return [.ioOnClosedChannel, .alreadyClosed, .eof, .inputClosed, .outputClosed].contains(error)
        case let error as IOError:
            return [ECONNRESET, EPIPE].contains(error.errnoCode)
        default:
            return false
        }
    }

    /// Maps Hummingbird's own errors (unknown route, undecodable body, body too large) to Ferry's codes.
    static func translate(_ error: HTTPError, _ request: Request) -> APIError {
        switch error.status {
        case .notFound:
            return APIError(.notFound, .notFound, "No route for \(request.method) \(request.uri.path).")
        case .methodNotAllowed:
            return APIError(.methodNotAllowed, .methodNotAllowed, "\(request.method) is not allowed on \(request.uri.path).")
        case .contentTooLarge:
            return APIError(.contentTooLarge, .payloadTooLarge, "The request body is too large.")
        case _ where error.status.kind == .clientError:
            return APIError(error.status, .badRequest, error.body ?? error.status.reasonPhrase)
        default:
            return APIError(error.status, .internalError, error.status.reasonPhrase)
        }
    }
}
