import FerryClient
import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

extension FakeAuthServer {
    func handle(_ route: Route, _ request: URLRequest) -> (Data, HTTPURLResponse) {
        let body = (try? JSONDecoder().decode([String: JSONValue].self, from: request.httpBody ?? Data())) ?? [:]
        switch route {
        case .signUp: return signUp(request, body)
        case .signIn: return signIn(request, body)
        case .refresh: return refresh(request, body)
        default: break
        }
        let bearer = request.value(forHTTPHeaderField: "Authorization")?.replacingOccurrences(of: "Bearer ", with: "")
        guard let bearer else { return respond(request, 401, error: .noAuthorization, "No bearer token.") }
        let authenticated: UUID? = state.withLock { state in
            guard let token = state.accessTokens[bearer], token.expiresAt > clock.seconds else { return nil }
            return token.user
        }
        guard let userID = authenticated else { return respond(request, 401, error: .badJWT, "Invalid JWT.") }
        switch route {
        case .user:
            return state.withLock { state in json(request, state.accounts.values.first { $0.user.id == userID }!.user) }
        case .updateUser:
            return state.withLock { state in
                let email = state.accounts.first { $0.value.user.id == userID }!.key
                if let password = body["password"]?.stringValue { state.accounts[email]!.password = password }
                if let data = body["data"]?.objectValue {
                    let merged = (state.accounts[email]!.user.userMetadata.objectValue ?? [:]).merging(data) { $1 }
                    state.accounts[email]!.user.userMetadata = .object(merged)
                }
                return json(request, state.accounts[email]!.user)
            }
        case .logout:
            let scope = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "scope" }?.value
            if scope == "global" { revokeSessions(of: userID) } else if scope != "others" {
                _ = state.withLock { $0.accessTokens.removeValue(forKey: bearer) }
            }
            return (Data(), Self.head(request, 204))
        case .profile:
            return state.withLock { state in json(request, Self.profileState(state.profiles[userID])) }
        case .updateProfile:
            return state.withLock { state in
                let fields = body["fields"]?.objectValue ?? [:]
                state.profiles[userID] = (state.profiles[userID] ?? [:]).merging(fields) { $1 }
                return json(request, Self.profileState(state.profiles[userID]))
            }
        case .signUp, .signIn, .refresh:
            fatalError("handled above")
        }
    }

    private func signUp(_ request: URLRequest, _ body: [String: JSONValue]) -> (Data, HTTPURLResponse) {
        guard let email = body["email"]?.stringValue, let password = body["password"]?.stringValue else {
            return respond(request, 400, error: .validationFailed, "Email and password are required.")
        }
        return state.withLock { state in
            guard state.accounts[email] == nil else {
                return respond(request, 422, error: .userAlreadyExists, "User already registered.")
            }
            let user = Self.makeUser(email: email, data: body["data"]?.objectValue ?? [:])
            state.accounts[email] = Account(password: password, user: user)
            return json(request, mint(for: user, expiresIn: Self.accessTokenLifetime, in: &state))
        }
    }

    private func signIn(_ request: URLRequest, _ body: [String: JSONValue]) -> (Data, HTTPURLResponse) {
        state.withLock { state in
            guard let email = body["email"]?.stringValue, let account = state.accounts[email],
                  account.password == body["password"]?.stringValue
            else { return respond(request, 400, error: .invalidCredentials, "Invalid login credentials.") }
            return json(request, mint(for: account.user, expiresIn: Self.accessTokenLifetime, in: &state))
        }
    }

    private func refresh(_ request: URLRequest, _ body: [String: JSONValue]) -> (Data, HTTPURLResponse) {
        state.withLock { state in
            let token = body["refresh_token"]?.stringValue ?? ""
            guard let userID = state.refreshTokens.removeValue(forKey: token) else {
                let code: ErrorCode = state.usedRefreshTokens.contains(token) ? .refreshTokenAlreadyUsed : .refreshTokenNotFound
                return respond(request, 400, error: code, "Invalid Refresh Token.")
            }
            state.usedRefreshTokens.insert(token)
            let user = state.accounts.values.first { $0.user.id == userID }!.user
            return json(request, mint(for: user, expiresIn: Self.accessTokenLifetime, in: &state))
        }
    }

    // MARK: Building answers

    func mint(for user: AuthUser, expiresIn: Int, in state: inout State) -> AuthSession {
        state.nextToken += 1
        let access = "access-\(state.nextToken)", refresh = "refresh-\(state.nextToken)"
        let expiresAt = clock.seconds + expiresIn
        state.accessTokens[access] = (user.id, expiresAt)
        state.refreshTokens[refresh] = user.id
        return AuthSession(accessToken: access, expiresIn: expiresIn, expiresAt: expiresAt, refreshToken: refresh, user: user)
    }

    static func makeUser(email: String, data: [String: JSONValue]) -> AuthUser {
        AuthUser(
            id: UUID(), email: email, emailConfirmedAt: nil, lastSignInAt: nil, userMetadata: .object(data),
            createdAt: "2025-06-15T00:00:00Z", updatedAt: "2025-06-15T00:00:00Z"
        )
    }

    static func profileState(_ fields: [String: JSONValue]?) -> ProfileState {
        let missing = requiredFields.filter { fields?[$0] == nil || fields?[$0] == .null }
        return ProfileState(fields: fields, missing: missing)
    }

    func json(_ request: URLRequest, _ value: some Encodable) -> (Data, HTTPURLResponse) {
        (try! JSONEncoder().encode(value), Self.head(request, 200, headers: ["Content-Type": "application/json"]))
    }

    func respond(
        _ request: URLRequest, _ status: Int, error code: ErrorCode, _ message: String, headers: [String: String] = [:]
    ) -> (Data, HTTPURLResponse) {
        let body = try! JSONEncoder().encode(ErrorBody(code: status, errorCode: code, msg: message))
        return (body, Self.head(request, status, headers: headers.merging(["Content-Type": "application/json"]) { $1 }))
    }

    static func head(_ request: URLRequest, _ status: Int, headers: [String: String] = [:]) -> HTTPURLResponse {
        HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    }
}
