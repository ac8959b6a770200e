import FerryCore
import Foundation
import Logging

extension AuthClient {
    /// An access token with more than 30 seconds left, refreshing the session first when needed.
    ///
    /// When the refresh fails for any reason but the end of the session (a ``RemoteError``: network, timeout, 5xx,
    /// rate limiting) and the current token has not expired yet, that token is returned: it still works.
    public func accessToken() async throws -> String {
        guard let session = try loadedSession() else { throw AuthError.notSignedIn }
        if isFresh(session) { return session.accessToken }
        do {
            return try await refresh().accessToken
        } catch let error as RemoteError {
            let stillCurrent = (try? loadedSession())?.accessToken == session.accessToken
            guard stillCurrent, TimeInterval(session.expiresAt) > now().timeIntervalSince1970 else { throw error }
            return session.accessToken
        }
    }

    /// Trades the refresh token for a new session, saves it, and returns it.
    ///
    /// Callers that ask while a refresh is in flight share it: one request, one result. When the server says the
    /// session is gone the session is deleted and the error (``AuthError/isSessionGone``) rethrown; on a network
    /// failure it is kept and the state becomes ``AuthState/offline(_:)``. The request runs in its own task, so
    /// cancelling one caller does not cancel it for the others.
    @discardableResult
    public func refresh() async throws -> AuthSession {
        if let inFlightRefresh { return try await inFlightRefresh.task.value }
        guard let session = try loadedSession() else { throw AuthError.notSignedIn }
        let generation = self.generation
        let task = Task { try await self.performRefresh(of: session, generation: generation) }
        inFlightRefresh = (generation, task)
        return try await task.value
    }

    /// Restores the saved session at launch: fresh → signed in without a request; expiring → refreshed.
    ///
    /// Only the server's explicit "session gone" codes sign out (the session is deleted). Any other failure —
    /// network, timeout, 5xx, rate limiting — keeps the session and answers ``RestoreOutcome/offline(_:)``.
    /// Throws only when the store cannot be read.
    public func restore() async throws -> RestoreOutcome {
        guard let session = try loadedSession() else {
            broadcast.publish(.signedOut)
            return .signedOut
        }
        if isFresh(session) {
            broadcast.publish(.signedIn(session.user))
            return .signedIn(session)
        }
        do {
            return .signedIn(try await refresh())
        } catch let error as AuthError where error.isSessionGone {
            return .signedOut
        } catch {
            logger.warning("kept the session; the server could not confirm it", metadata: ["ferry.error": "\(error)"])
            guard let kept = try? loadedSession() else { return .signedOut }
            broadcast.publish(.offline(kept.user))
            return .offline(kept)
        }
    }

    /// The one refresh request behind ``refresh()``; runs in the shared task.
    private func performRefresh(of session: AuthSession, generation: Int) async throws -> AuthSession {
        defer {
            if inFlightRefresh?.generation == generation { inFlightRefresh = nil }
        }
        do {
            let request = try ServerRequest.json(
                "POST", "auth/v1/token", query: [URLQueryItem(name: "grant_type", value: "refresh_token")],
                body: RefreshBody(refreshToken: session.refreshToken), isAuthorized: false
            )
            let fresh = try await send(request, as: AuthSession.self, what: "session")
            // Signed out or in again while the request was out: its answer belongs to a session that is gone.
            guard generation == self.generation else { throw AuthError.notSignedIn }
            do {
                try adopt(fresh, replacing: false)
            } catch {
                // The new session works in this process even if it could not be saved; adopt logged why.
            }
            logger.debug("refreshed the session", metadata: ["ferry.user.id": "\(fresh.user.id)"])
            return fresh
        } catch let error as AuthError where error.isSessionGone {
            if generation == self.generation {
                logger.notice("the server ended the session", metadata: ["ferry.error.code": "\(error.code)"])
                try? forgetSession()
            }
            throw error
        } catch let error as RemoteError where error.isOffline {
            if generation == self.generation { broadcast.publish(.offline(session.user)) }
            throw error
        }
    }
}
