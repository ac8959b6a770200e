import FerryCore
import Foundation

/// A refusal by one of the server's services or its storage: what kind of refusal it is, a stable code and a
/// message. Services know nothing of HTTP: each front-end maps the ``Kind`` to its own answer, the HTTP layer in one
/// table (``APIError/init(_:)``), so a table API or an operator console reuses the rules and their errors as they are.
public struct ServiceError: FerryError {
    /// What kind of refusal: what the caller did wrong, or what the server could not do.
    public enum Kind: Sendable, Hashable {
        /// The request is malformed or names something impossible (HTTP 400).
        case invalidRequest
        /// No valid credentials (401).
        case unauthenticated
        /// Valid credentials without the right (403).
        case forbidden
        /// Nothing there, or nothing the caller may see (404).
        case notFound
        /// No answer in the form the request accepts, such as one object where several rows matched (406).
        case notAcceptable
        /// The request gave up waiting for its own body (408).
        case timedOut
        /// It conflicts with the current state (409).
        case conflict
        /// It is gone for good, such as an expired code (410).
        case gone
        /// A precondition the caller sent does not hold (412).
        case preconditionFailed
        /// Larger than allowed (413).
        case tooLarge
        /// A media type the target does not take (415).
        case unsupportedMediaType
        /// A byte range outside the content (416).
        case rangeNotSatisfiable
        /// Well formed, but a value breaks a rule (422).
        case unprocessable
        /// Too many attempts; ``ServiceError/retryAfter`` says when to try again (429).
        case rateLimited
        /// The server failed (500).
        case internalFailure
        /// A service the server relies on failed, such as GitHub (502).
        case upstreamFailed
        /// The server cannot serve now, such as a database that does not answer (503).
        case unavailable
    }

    public var kind: Kind
    public var code: ErrorCode
    public var message: String
    /// When to try again, for rate limits and temporary failures.
    public var retryAfter: Duration?
    /// Extra members of the error's body, such as `weak_password: {reasons: […]}` or a resumable upload's `offset`.
    public var details: [String: JSONValue]
    /// Header fields an HTTP front-end adds to the answer (`Upload-Offset`, `Content-Range`), by name.
    public var headers: [String: String]

    /// Creates a refusal.
    public init(
        _ kind: Kind, _ code: ErrorCode, _ message: String, retryAfter: Duration? = nil, details: [String: JSONValue] = [:],
        headers: [String: String] = [:]
    ) {
        self.kind = kind
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.details = details
        self.headers = headers
    }
}
