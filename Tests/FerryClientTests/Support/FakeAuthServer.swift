import FerryClient
import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization

/// An ``HTTPTransport`` that plays the Ferry server's `/auth/v1` and `/sync/v1/profile` routes from memory.
///
/// It rotates refresh tokens like GoTrue, rejects expired access tokens with `401 bad_jwt`, counts requests per
/// route, and fails any route on demand (network error, timeout, or an error status).
final class FakeAuthServer: HTTPTransport {
    enum Route: Hashable, Sendable {
        case signUp, signIn, refresh, user, updateUser, logout, profile, updateProfile
    }

    enum Failure: Sendable {
        case network
        case timeout
        case status(Int, ErrorCode, retryAfter: Int? = nil)
        /// An answer with this status and body, for error bodies the client must cope with.
        case raw(Int, body: String, headers: [String: String] = [:])
    }

    static let apiKey = "anon-test-key"
    static let requiredFields = ["first_name", "native_language", "learning_languages"]
    static let accessTokenLifetime = 3600

    let endpoint = ServerEndpoint(baseURL: URL(string: "https://ferry.test/base")!, apiKey: apiKey)
    let clock: TestClock

    struct Account {
        var password: String
        var user: AuthUser
    }

    struct State {
        var accounts: [String: Account] = [:]
        var accessTokens: [String: (user: UUID, expiresAt: Int)] = [:]
        var refreshTokens: [String: UUID] = [:]
        var usedRefreshTokens: Set<String> = []
        var profiles: [UUID: [String: JSONValue]] = [:]
        var failures: [Route: Failure] = [:]
        var counts: [Route: Int] = [:]
        var requests: [(route: Route, request: URLRequest)] = []
        var nextToken = 0
        var refreshGate: (@Sendable () async -> Void)?
    }

    let state = Mutex(State())

    init(clock: TestClock = TestClock()) {
        self.clock = clock
    }

    /// A client of this server over `store`, on the server's clock.
    func makeClient(store: any SessionStore = InMemorySessionStore()) -> AuthClient {
        AuthClient(endpoint: endpoint, store: store, transport: self, now: { [clock] in clock.now }, logger: Self.quietLogger)
    }

    /// A logger that keeps test output to the test results.
    static let quietLogger: Logger = {
        var logger = Logger(label: "ferry.test")
        logger.logLevel = .critical
        return logger
    }()

    // MARK: Controls

    /// Makes every request to `route` fail with `failure` (or succeed again with `nil`).
    func fail(_ route: Route, with failure: Failure?) {
        state.withLock { $0.failures[route] = failure }
    }

    /// Suspends every refresh request in `gate` before answering it.
    func holdRefreshes(in gate: @escaping @Sendable () async -> Void) {
        state.withLock { $0.refreshGate = gate }
    }

    /// How many requests reached `route`.
    func count(_ route: Route) -> Int { state.withLock { $0.counts[route, default: 0] } }

    /// How many requests reached the server at all.
    var totalRequests: Int { state.withLock { $0.requests.count } }

    /// The last request to `route`.
    func lastRequest(_ route: Route) -> URLRequest? {
        state.withLock { $0.requests.last { $0.route == route }?.request }
    }

    /// Creates an account (if needed) and a session for it whose access token expires in `expiresIn` seconds.
    func issueSession(email: String = "ada@example.com", password: String = "correct horse", expiresIn: Int = 3600) -> AuthSession {
        state.withLock { state in
            if state.accounts[email] == nil {
                state.accounts[email] = Account(password: password, user: Self.makeUser(email: email, data: [:]))
            }
            return mint(for: state.accounts[email]!.user, expiresIn: expiresIn, in: &state)
        }
    }

    /// Sets (or with `nil` deletes) the profile of `userID`.
    func setProfile(_ fields: [String: JSONValue]?, for userID: UUID) {
        state.withLock { $0.profiles[userID] = fields }
    }

    /// A complete profile for the required fields.
    static let completeProfile: [String: JSONValue] = [
        "first_name": .string("Ada"), "native_language": .string("en"), "learning_languages": .array([.string("fr")]),
    ]

    /// Revokes every session of `userID`, as signing out everywhere or deleting the Apple ID link would.
    func revokeSessions(of userID: UUID) {
        state.withLock { state in
            state.accessTokens = state.accessTokens.filter { $0.value.user != userID }
            state.refreshTokens = state.refreshTokens.filter { $0.value != userID }
        }
    }

    /// Makes every access token issued so far expire now, while refresh tokens stay valid.
    func expireAccessTokens() {
        state.withLock { state in
            let now = clock.seconds
            for token in state.accessTokens.keys { state.accessTokens[token]!.expiresAt = now - 1 }
        }
    }

    // MARK: Transport

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        guard let route = Self.route(of: request) else {
            return respond(request, 404, error: .notFound, "No route for \(request.url?.path ?? "").")
        }
        let (failure, gate) = state.withLock { state in
            state.counts[route, default: 0] += 1
            state.requests.append((route, request))
            return (state.failures[route], route == .refresh ? state.refreshGate : nil)
        }
        if let gate { await gate() }
        switch failure {
        case .network: throw URLError(.cannotConnectToHost)
        case .timeout: throw URLError(.timedOut)
        case .status(let status, let code, let retryAfter):
            return respond(request, status, error: code, "Injected failure.", headers: retryAfter.map { ["Retry-After": "\($0)"] } ?? [:])
        case .raw(let status, let body, let headers):
            return (Data(body.utf8), Self.head(request, status, headers: headers))
        case nil:
            break
        }
        guard request.value(forHTTPHeaderField: "apikey") == Self.apiKey else {
            return respond(request, 401, error: .invalidAPIKey, "Invalid API key.")
        }
        return handle(route, request)
    }

    private static func route(of request: URLRequest) -> Route? {
        guard let url = request.url else { return nil }
        let path = url.path
        let grant = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "grant_type" }?.value
        switch (request.httpMethod ?? "GET", path) {
        case ("POST", "/base/auth/v1/signup"): return .signUp
        case ("POST", "/base/auth/v1/token"): return grant == "password" ? .signIn : grant == "refresh_token" ? .refresh : nil
        case ("GET", "/base/auth/v1/user"): return .user
        case ("PUT", "/base/auth/v1/user"): return .updateUser
        case ("POST", "/base/auth/v1/logout"): return .logout
        case ("GET", "/base/sync/v1/profile"): return .profile
        case ("PATCH", "/base/sync/v1/profile"): return .updateProfile
        default: return nil
        }
    }
}
