import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a failed exchange with the server stands for: the one mapping from answers and transport failures to errors.
enum ServerAnswer {
    /// The error a non-2xx answer stands for: the server's `ErrorBody` when it sent one; an ``AuthError`` when it
    /// says the session is over, a ``RemoteError`` otherwise.
    static func failure(_ response: HTTPURLResponse, body: Data) -> any Error {
        let status = response.statusCode
        let retryAfter = response.value(forHTTPHeaderField: "Retry-After").flatMap(parseRetryAfter)
        if let error = try? JSONDecoder().decode(ErrorBody.self, from: body), !error.errorCode.isEmpty {
            let code = ErrorCode(rawValue: error.errorCode)
            if AuthError.sessionGoneCodes.contains(code) { return AuthError(code: code, message: error.msg, status: status) }
            var remote = RemoteError(code: code, message: error.msg, status: status, retryAfter: retryAfter)
            remote.lastMutationId = error.lastMutationId
            remote.uploadOffset = error.offset
            return remote
        }
        let code: ErrorCode = switch status {
        case 429: .overRequestRateLimit
        case 500...: .unavailable
        default: .unexpectedResponse
        }
        return RemoteError(code: code, message: "The server answered \(status) without a readable error.", status: status, retryAfter: retryAfter)
    }

    /// The error a failed `HTTPTransport.send` stands for; `nil` for cancellation, which callers rethrow as is.
    static func failure(transportError error: any Error) -> (any Error)? {
        switch error {
        case is CancellationError:
            return nil
        case let error as URLError where error.code == .cancelled:
            return nil
        case let error as URLError where error.code == .timedOut:
            return RemoteError(code: .requestTimedOut, message: "The server did not answer in time.")
        case let error as URLError:
            return RemoteError(code: .networkUnavailable, message: "The server could not be reached (\(error.summary)).")
        case is RemoteError, is AuthError:
            return error
        default:
            return RemoteError(code: .networkUnavailable, message: "The server could not be reached (\(error)).")
        }
    }

    /// Reads `Retry-After` given in seconds (the form Ferry and GoTrue send).
    private static func parseRetryAfter(_ value: String) -> Duration? {
        guard let seconds = Int(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return .seconds(seconds)
    }
}
