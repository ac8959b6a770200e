import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AuthError {
    /// The error a non-2xx answer stands for: the server's `ErrorBody` when it sent one.
    init(response: HTTPURLResponse, body: Data) {
        let status = response.statusCode
        let retryAfter = response.value(forHTTPHeaderField: "Retry-After").flatMap(Self.parseRetryAfter)
        if let error = try? JSONDecoder().decode(ErrorBody.self, from: body), !error.errorCode.isEmpty {
            self.init(code: ErrorCode(rawValue: error.errorCode), message: error.msg, status: status, retryAfter: retryAfter)
            lastMutationId = error.lastMutationId
            uploadOffset = error.offset
            return
        }
        let code: ErrorCode = switch status {
        case 429: .overRequestRateLimit
        case 500...: .unavailable
        default: .unexpectedResponse
        }
        self.init(code: code, message: "The server answered \(status) without a readable error.", status: status, retryAfter: retryAfter)
    }

    /// The error a failed `HTTPTransport.send` stands for; `nil` for cancellation, which callers rethrow as is.
    init?(transportError error: any Error) {
        switch error {
        case is CancellationError:
            return nil
        case let error as AuthError:
            self = error
        case let error as URLError where error.code == .cancelled:
            return nil
        case let error as URLError where error.code == .timedOut:
            self.init(code: .requestTimedOut, message: "The server did not answer in time.")
        case let error as URLError:
            self.init(code: .networkUnavailable, message: "The server could not be reached (\(error.summary)).")
        default:
            self.init(code: .networkUnavailable, message: "The server could not be reached (\(error)).")
        }
    }

    /// A 2xx answer whose body is not the documented JSON.
    static func unreadable(_ what: String, status: Int) -> AuthError {
        AuthError(code: .unexpectedResponse, message: "The server's answer is not a readable \(what).", status: status)
    }

    /// A failure of the session store, wrapped so callers see one error type.
    static func store(_ error: any Error, _ action: String) -> AuthError {
        if let error = error as? AuthError { return error }
        return AuthError(code: .sessionStoreFailed, message: "Could not \(action) the saved session: \(error).")
    }

    /// Reads `Retry-After` given in seconds (the form Ferry and GoTrue send).
    private static func parseRetryAfter(_ value: String) -> Duration? {
        guard let seconds = Int(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return .seconds(seconds)
    }
}
