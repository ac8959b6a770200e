import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id (the caller's sane `X-Request-Id`, or a new one), returns it in the
/// response's `X-Request-Id`, and logs one line per request: method, path, status, duration.
///
/// Only the path is logged, never the query string or headers, which may carry tokens.
struct RequestLoggingMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let requestID = request.headers[.requestID].flatMap(Self.sanitized) ?? context.id
        context.requestID = requestID
        context.logger[metadataKey: "ferry.request.id"] = .string(requestID)
        let start = ContinuousClock.now
        var response = try await next(request, context)
        response.headers[.requestID] = requestID
        let elapsed = ContinuousClock.now - start
        context.logger.info(
            "\(request.method) \(request.uri.path) \(response.status.code)",
            metadata: ["ferry.http.duration_ms": .stringConvertible(Self.milliseconds(elapsed))]
        )
        return response
    }

    /// A caller's id is kept only when short and plain, so it cannot forge log lines.
    static func sanitized(_ value: String) -> String? {
        guard (1...64).contains(value.count),
              value.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) })
        else { return nil }
        return value
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return ((Double(seconds) * 1000 + Double(attoseconds) / 1e15) * 1000).rounded() / 1000
    }
}

extension HTTPField.Name {
    /// `X-Request-Id`.
    static let requestID = Self("X-Request-Id")!
}
