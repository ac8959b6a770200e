import FerryCore
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AuthClient {
    /// Sends `request` with the `apikey` header and the session's bearer token, and returns the body of its 2xx answer.
    ///
    /// On `401 bad_jwt` the session is refreshed once (or the token another caller just refreshed is used) and the
    /// request sent again. Use it for any of the server's authenticated routes, such as `/sync/v1/profile`.
    /// Throws ``AuthError``: the server's error for a non-2xx answer, `ErrorCode.networkUnavailable`
    /// or `ErrorCode.requestTimedOut` when no answer came.
    public func authorizedData(for request: URLRequest) async throws -> Data {
        try await authorizedResponse(for: request).data
    }

    /// ``authorizedData(for:)`` with the answer's head, for routes whose headers carry the result (blob uploads).
    public func authorizedResponse(for request: URLRequest) async throws -> (data: Data, response: HTTPURLResponse) {
        let token = try await accessToken()
        do {
            return try await sendAuthorized(request, token: token)
        } catch let error as AuthError where error.status == 401 && error.code == .badJWT {
            logger.debug("access token refused; refreshing once", metadata: ["ferry.http.path": "\(request.url?.path ?? "")"])
            let retryToken: String
            if let current = try loadedSession(), current.accessToken != token, isFresh(current) {
                retryToken = current.accessToken
            } else {
                retryToken = try await refresh().accessToken
            }
            return try await sendAuthorized(request, token: retryToken)
        }
    }

    /// Sends `request` with `token`, following the outcome in the state: reachable, offline, or session gone.
    private func sendAuthorized(_ request: URLRequest, token: String) async throws -> (data: Data, response: HTTPURLResponse) {
        var request = request
        request.setValue(endpoint.apiKey, forHTTPHeaderField: "apikey")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        do {
            let answer = try await sendExpectingSuccessResponse(request)
            if case .offline(let user?) = broadcast.current { broadcast.publish(.signedIn(user)) }
            return answer
        } catch let error as AuthError where error.isSessionGone && error.status != nil {
            // The server ended the session this token belongs to; forget it unless it was replaced meanwhile.
            if (try? loadedSession())?.accessToken == token {
                logger.notice("the server ended the session", metadata: ["ferry.error.code": "\(error.code)"])
                try? forgetSession()
            }
            throw error
        } catch let error as AuthError where error.isOffline {
            if let user = (try? loadedSession())?.user { broadcast.publish(.offline(user)) }
            throw error
        }
    }

    /// A request to `path` under the endpoint with the `apikey` header and, when given, a JSON `body`.
    func makeRequest(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: (any Encodable)? = nil
    ) throws -> URLRequest {
        var request = URLRequest(url: endpoint.url(path: path, query: query))
        request.httpMethod = method
        request.setValue(endpoint.apiKey, forHTTPHeaderField: "apikey")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(try JSONValueEncoder().encodeText(body))
        }
        return request
    }

    /// Sends `request` and returns the body of its 2xx answer, or throws the ``AuthError`` it stands for.
    func sendExpectingSuccess(_ request: URLRequest) async throws -> Data {
        try await sendExpectingSuccessResponse(request).data
    }

    /// ``sendExpectingSuccess(_:)`` with the answer's head.
    func sendExpectingSuccessResponse(_ request: URLRequest) async throws -> (data: Data, response: HTTPURLResponse) {
        let data: Data, response: HTTPURLResponse
        do {
            (data, response) = try await transport.send(request)
        } catch {
            guard let mapped = AuthError(transportError: error) else { throw error }
            logger.debug("request failed", metadata: ["ferry.http.path": "\(request.url?.path ?? "")", "ferry.error": "\(mapped.code)"])
            throw mapped
        }
        guard (200..<300).contains(response.statusCode) else {
            let error = AuthError(response: response, body: data)
            logger.debug("request refused", metadata: [
                "ferry.http.path": "\(request.url?.path ?? "")", "ferry.http.status": "\(response.statusCode)",
                "ferry.error.code": "\(error.code)",
            ])
            throw error
        }
        return (data, response)
    }

    /// Decodes a 2xx body, or throws `ErrorCode.unexpectedResponse` naming `what` was expected.
    func decode<Value: Decodable>(_ type: Value.Type, from data: Data, what: String) throws -> Value {
        do {
            return try JSONValueDecoder().decode(type, from: data)
        } catch {
            throw AuthError.unreadable(what, status: 200)
        }
    }
}
