import FerryCore
import Foundation
import Logging

/// Signs a person in and out against a Ferry (Supabase Auth compatible) server and keeps their session fresh.
///
/// The session is saved in a ``SessionStore`` after every change and read from it lazily, once. Access tokens are
/// refreshed when they expire within 30 seconds, by one refresh request however many callers ask at once
/// (the refresh token rotates on every refresh, so two requests would revoke the session). Only the server's
/// explicit "session gone" codes end a session; a network failure keeps it and reports ``AuthState/offline(_:)``.
///
/// ```swift
/// let auth = AuthClient(endpoint: endpoint, store: FileSessionStore(fileURL: sessionFile))
/// switch try await auth.restore() {
/// case .signedIn(let session): showMain(session.user)
/// case .signedOut: showSignIn()
/// case .offline: showOfflineScreen()   // never a sign-out
/// }
/// ```
public actor AuthClient {
    /// The server this client talks to.
    public nonisolated let endpoint: ServerEndpoint

    /// How long before its expiry an access token counts as expired and is refreshed.
    public static let refreshMargin: TimeInterval = 30

    let store: any SessionStore
    let transport: any HTTPTransport
    let now: @Sendable () -> Date
    let logger: Logger
    let broadcast = Broadcast<AuthState>()

    /// The session in memory: not read from the store yet, or read (and possibly `nil`).
    var cache: SessionCache = .unloaded
    /// Bumped whenever the session is replaced or removed, so a refresh that started before cannot bring it back.
    var generation = 0
    /// The refresh in flight, shared by every caller that needs a fresh token meanwhile.
    var inFlightRefresh: (generation: Int, task: Task<AuthSession, any Error>)?

    enum SessionCache {
        case unloaded
        case loaded(AuthSession?)
    }

    /// Creates a client for `endpoint` that keeps the session in `store`.
    ///
    /// - Parameters:
    ///   - endpoint: the server and its anon key.
    ///   - store: where the session is kept between launches.
    ///   - transport: sends the requests; a ``DefaultHTTPTransport`` with a 30 s timeout by default.
    ///   - now: the clock that decides whether an access token has expired.
    ///   - logger: receives sign-ins, refreshes and failures; tokens and passwords are never logged.
    public init(
        endpoint: ServerEndpoint,
        store: any SessionStore,
        transport: any HTTPTransport = DefaultHTTPTransport(),
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "ferry.auth")
    ) {
        self.endpoint = endpoint
        self.store = store
        self.transport = transport
        self.now = now
        self.logger = logger
    }

    /// The current session, read from the store on first use; `nil` when nobody is signed in.
    public var session: AuthSession? {
        get throws { try loadedSession() }
    }

    /// A stream of the sign-in state: the current state first (once the saved session has been read), then each change.
    ///
    /// Any number of subscribers may listen; each stream ends when its task is cancelled or the client goes away.
    public nonisolated func stateChanges() -> AsyncStream<AuthState> {
        let stream = broadcast.subscribe()
        if broadcast.current == nil {
            Task { try? await self.loadedSession() }
        }
        return stream
    }

    /// Creates an account and signs it in; `data` becomes the user's metadata.
    ///
    /// A server that confirms addresses (mail set up) answers with a mailed code instead of a session: this then throws
    /// ``AuthError`` with code `email_not_confirmed`; pass the code to ``verify(email:code:type:)`` with `.signup`.
    @discardableResult
    public func signUp(email: String, password: String, data: [String: JSONValue]? = nil) async throws -> AuthSession {
        let request = try ServerRequest.json("POST", "auth/v1/signup", body: SignUpBody(email: email, password: password, data: data), isAuthorized: false)
        let reply = try await send(request).data
        guard let session = try? JSONValueDecoder().decode(AuthSession.self, from: reply) else {
            guard let user = try? JSONValueDecoder().decode(AuthUser.self, from: reply) else { throw RemoteError.unreadable("session", status: 200) }
            throw AuthError(
                code: .emailNotConfirmed, message: "A confirmation code was mailed to \(user.email); enter it to finish signing up.", status: 200
            )
        }
        try adopt(session, replacing: true)
        logger.info("signed up", metadata: ["ferry.user.id": "\(session.user.id)"])
        return session
    }

    /// Signs in with an email and a password.
    @discardableResult
    public func signIn(email: String, password: String) async throws -> AuthSession {
        let request = try ServerRequest.json(
            "POST", "auth/v1/token", query: [URLQueryItem(name: "grant_type", value: "password")],
            body: PasswordBody(email: email, password: password), isAuthorized: false
        )
        let session = try await send(request, as: AuthSession.self, what: "session")
        try adopt(session, replacing: true)
        logger.info("signed in", metadata: ["ferry.user.id": "\(session.user.id)"])
        return session
    }

    /// Signs out: ends the `scope`'s sessions on the server, and forgets this device's session unless `scope` is `.others`.
    ///
    /// With `.local` and `.global` the session is removed from this device even when the server cannot be reached;
    /// the error thrown afterwards then only means the server may still hold it. A session the server already
    /// ended counts as signed out, not as an error.
    public func signOut(scope: SignOutScope = .local) async throws {
        let current: AuthSession?
        do {
            current = try loadedSession()
        } catch {
            // An unreadable store still gets cleared below; only `.others` needs the session.
            if scope == .others { throw error }
            current = nil
        }
        var serverError: (any Error)?
        if current != nil {
            do {
                _ = try await send(ServerRequest("POST", "auth/v1/logout", query: [URLQueryItem(name: "scope", value: scope.rawValue)]))
            } catch let error as AuthError where error.isSessionGone {
                // Already gone on the server.
            } catch let error as RemoteError where error.status == 401 || error.status == 404 {
                // Already gone on the server.
            } catch {
                serverError = error
            }
        } else if scope == .others {
            throw AuthError.notSignedIn
        }
        if scope != .others { try forgetSession() }
        logger.info("signed out", metadata: ["ferry.auth.scope": "\(scope.rawValue)"])
        if let serverError { throw serverError }
    }

    // MARK: Session bookkeeping

    /// The session in memory, reading it from the store the first time.
    func loadedSession() throws -> AuthSession? {
        if case .loaded(let session) = cache { return session }
        let session: AuthSession?
        do {
            session = try store.load()
        } catch {
            throw AuthError.store(error, "read")
        }
        cache = .loaded(session)
        broadcast.publish(session.map { .signedIn($0.user) } ?? .signedOut)
        return session
    }

    /// Makes `session` current and saves it; `replacing` (a new sign-in) also detaches any refresh in flight.
    ///
    /// The session is used even when saving fails; the error then means it will not survive the process.
    func adopt(_ session: AuthSession, replacing: Bool) throws {
        if replacing {
            generation += 1
            inFlightRefresh = nil
        }
        cache = .loaded(session)
        broadcast.publish(.signedIn(session.user))
        do {
            try store.save(session)
        } catch {
            logger.error("could not save the session", metadata: ["ferry.error": "\(error)"])
            throw AuthError.store(error, "save")
        }
    }

    /// Forgets the session in memory and in the store, and detaches any refresh in flight.
    func forgetSession() throws {
        generation += 1
        inFlightRefresh = nil
        cache = .loaded(nil)
        broadcast.publish(.signedOut)
        do {
            try store.delete()
        } catch {
            logger.error("could not delete the saved session", metadata: ["ferry.error": "\(error)"])
            throw AuthError.store(error, "delete")
        }
    }

    /// Whether `session`'s access token has more than ``refreshMargin`` left.
    func isFresh(_ session: AuthSession) -> Bool {
        TimeInterval(session.expiresAt) - now().timeIntervalSince1970 > Self.refreshMargin
    }
}
