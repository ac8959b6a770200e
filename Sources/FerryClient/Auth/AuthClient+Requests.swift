import FerryCore
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one request pipeline of the SDK: account, sync, devices, profile, blobs and the stream's refusals all go
/// through ``AuthClient/send(_:)``.
extension AuthClient {
    /// Sends `request` and returns its 2xx answer.
    ///
    /// An authorized request carries the session's token; on `401 bad_jwt` the session is refreshed once (or the token
    /// another caller just refreshed is used) and the request sent again, and the state follows the outcome
    /// (reachable, offline, or session gone). Throws ``AuthError`` when the session is over, ``RemoteError`` for any
    /// other failure: the server's status and code, or `network_unavailable` / `request_timed_out` when no answer came.
    public func send(_ request: ServerRequest) async throws -> (data: Data, response: HTTPURLResponse) {
        let urlRequest = request.urlRequest(for: endpoint)
        guard request.isAuthorized else { return try await exchange(urlRequest) }
        let token = try await accessToken()
        do {
            return try await sendAuthorized(urlRequest, token: token)
        } catch let error as RemoteError where error.status == 401 && error.code == .badJWT {
            logger.debug("access token refused; refreshing once", metadata: ["ferry.http.path": "\(request.path)"])
            let retryToken: String
            if let current = try loadedSession(), current.accessToken != token, isFresh(current) {
                retryToken = current.accessToken
            } else {
                retryToken = try await refresh().accessToken
            }
            return try await sendAuthorized(urlRequest, token: retryToken)
        }
    }

    /// The `URLRequest` ``send(_:)`` would send for `request` now, with a fresh session token: for the realtime
    /// stream, which the pipeline cannot send itself (it is a WebSocket upgrade).
    func authorizedRequest(_ request: ServerRequest) async throws -> URLRequest {
        var urlRequest = request.urlRequest(for: endpoint)
        urlRequest.setValue("Bearer \(try await accessToken())", forHTTPHeaderField: "Authorization")
        return urlRequest
    }

    /// ``send(_:)``, with the 2xx body read as a `Reply`; a body that is not one is `unexpected_response`, naming `what`.
    public func send<Reply: Decodable & Sendable>(_ request: ServerRequest, as reply: Reply.Type, what: String) async throws -> Reply {
        try Self.read(try await send(request).data, what: what) { try JSONValueDecoder().decode(Reply.self, from: $0) }
    }

    /// ``send(_:)``, with the 2xx body read as a sync message by its one reader.
    func send<Reply: JSONStreamReadable & Sendable>(_ request: ServerRequest, as reply: Reply.Type, what: String) async throws -> Reply {
        try Self.read(try await send(request).data, what: what) { try JSONValueDecoder().decode(Reply.self, from: $0) }
    }

    private static func read<Reply>(_ data: Data, what: String, _ decode: (Data) throws -> Reply) throws -> Reply {
        do {
            return try decode(data)
        } catch {
            throw RemoteError.unreadable(what, status: 200)
        }
    }

    /// Sends `request` with `token`, following the outcome in the state: reachable, offline, or session gone.
    private func sendAuthorized(_ request: URLRequest, token: String) async throws -> (data: Data, response: HTTPURLResponse) {
        var request = request
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        do {
            let answer = try await exchange(request)
            if case .offline(let user?) = broadcast.current { broadcast.publish(.signedIn(user)) }
            return answer
        } catch let error as AuthError where error.isSessionGone && error.status != nil {
            // The server ended the session this token belongs to; forget it unless it was replaced meanwhile.
            if (try? loadedSession())?.accessToken == token {
                logger.notice("the server ended the session", metadata: ["ferry.error.code": "\(error.code)"])
                try? forgetSession()
            }
            throw error
        } catch let error as RemoteError where error.isOffline {
            if let user = (try? loadedSession())?.user { broadcast.publish(.offline(user)) }
            throw error
        }
    }

    /// Sends `request` and returns its 2xx answer, or throws the error the failure stands for (``ServerAnswer``).
    private func exchange(_ request: URLRequest) async throws -> (data: Data, response: HTTPURLResponse) {
        let data: Data, response: HTTPURLResponse
        do {
            (data, response) = try await transport.send(request)
        } catch {
            guard let mapped = ServerAnswer.failure(transportError: error) else { throw error }
            logger.debug("request failed", metadata: ["ferry.http.path": "\(request.url?.path ?? "")", "ferry.error": "\((mapped as? any FerryError)?.code.rawValue ?? "")"])
            throw mapped
        }
        guard (200..<300).contains(response.statusCode) else {
            let error = ServerAnswer.failure(response, body: data)
            logger.debug("request refused", metadata: [
                "ferry.http.path": "\(request.url?.path ?? "")", "ferry.http.status": "\(response.statusCode)",
                "ferry.error.code": "\((error as? any FerryError)?.code.rawValue ?? "")",
            ])
            throw error
        }
        return (data, response)
    }
}
