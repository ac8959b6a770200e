import Crypto
import FerryCore
import FerrySecurity
import Foundation
import JWTKit

/// The claims of a Ferry access token, the ones Supabase clients read.
struct AccessTokenClaims: JWTPayload {
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var iss: IssuerClaim
    var email: String
    var role: String
    var sessionID: String

    enum CodingKeys: String, CodingKey {
        case sub, aud, exp, iat, iss, email, role
        case sessionID = "session_id"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        guard aud.value.contains("authenticated") else { throw JWTError.claimVerificationFailure(failedClaim: aud, reason: "audience") }
    }
}

/// The claims of an API key (`apikey` header): a long-lived JWT naming a role.
struct APIKeyClaims: JWTPayload {
    var iss: IssuerClaim
    var role: String
    var iat: IssuedAtClaim
    var exp: ExpirationClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Signs and verifies JWTs with the server's HMAC secret, and derives refresh tokens.
///
/// A refresh token's successor is `HMAC(secret, token)`: only hashes are stored, yet the server can hand
/// the same successor to every concurrent refresh that presents the same token.
struct TokenIssuer: Sendable {
    private let keys: JWTKeyCollection
    private let refreshKey: SymmetricKey
    private let verified = VerifiedTokens(capacity: 100_000)
    let issuer: String

    init(secret: [UInt8], issuer: String) async {
        // Keys sorted: the header's fields live in a dictionary whose order differs from one dictionary to the next, and
        // the API keys must come out byte for byte the same from every instance given the same secret. The signer takes
        // the serializer itself: `add(hmac:)` does not use the collection's default one.
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        let serializer = DefaultJWTSerializer(jsonEncoder: encoder)
        keys = JWTKeyCollection(defaultJWTSerializer: serializer)
        await keys.add(hmac: HMACKey(key: SymmetricKey(data: secret)), digestAlgorithm: .sha256, serializer: serializer)
        // A separate key for refresh tokens, so the JWT key never signs anything but JWTs.
        refreshKey = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Array("ferry refresh tokens".utf8), using: SymmetricKey(data: secret)))
        self.issuer = issuer
    }

    /// An access token for `user` in `sessionID`, valid for `lifetime` from `now`.
    /// Its times are whole seconds, as GoTrue's: clients that read the claims (supabase-py's `get_claims` and
    /// `set_session`) refuse a fractional `exp` or `iat`.
    func makeAccessToken(userID: UUID, email: String, sessionID: UUID, now: Date, lifetime: Duration) async throws -> (token: String, expiresAt: Date) {
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let expiresAt = issuedAt.addingTimeInterval(TimeInterval(lifetime.components.seconds))
        let claims = AccessTokenClaims(
            sub: .init(value: userID.lowercasedText), aud: .init(value: ["authenticated"]),
            exp: .init(value: expiresAt), iat: .init(value: issuedAt), iss: .init(value: issuer),
            email: email, role: "authenticated", sessionID: sessionID.lowercasedText
        )
        return (try await keys.sign(claims), expiresAt)
    }

    /// The verified claims of an access token; throws for a malformed, expired or foreign token, one of another
    /// issuer included (a deployment that shares the secret but not the `iss`).
    func verifyAccessToken(_ token: String) async throws -> AccessTokenClaims {
        let now = Date()
        if let claims = verified.claims(of: token, now: now) { return claims }
        let claims = try await keys.verify(token, as: AccessTokenClaims.self)
        guard claims.iss.value == issuer else { throw JWTError.claimVerificationFailure(failedClaim: claims.iss, reason: "issuer") }
        verified.insert(token, claims: claims, now: now)
        return claims
    }

    /// The anon key.
    func makeAnonKey() async throws -> String {
        try await makeAPIKey(role: "anon")
    }

    /// The API key of `role` (`anon` or `service_role`). Its claims are fixed (issued 2026-01-01, valid until 2100), so
    /// the key follows from the secret and the issuer alone: every instance given the same secret makes the same keys.
    func makeAPIKey(role: String) async throws -> String {
        try await makeAPIKey(role: role, issuedAt: Date(timeIntervalSince1970: 1_767_225_600), expiresAt: Date(timeIntervalSince1970: 4_102_444_800))
    }

    /// An API key with the given times, as instances before 2026-11-27 made them (issued at their first start).
    func makeAPIKey(role: String, issuedAt: Date, expiresAt: Date) async throws -> String {
        try await keys.sign(APIKeyClaims(iss: .init(value: issuer), role: role, iat: .init(value: issuedAt), exp: .init(value: expiresAt)))
    }

    /// Whether `key` is an API key this server signed, of `role`.
    func verifyAPIKey(_ key: String, role: String = "anon") async -> Bool {
        guard let claims = try? await keys.verify(key, as: APIKeyClaims.self) else { return false }
        return claims.role == role
    }

    /// A fresh refresh token: 256 random bits.
    static func makeRefreshToken() -> String {
        SecureRandom.token()
    }

    /// The token that replaces `token` when it is used.
    func successor(of token: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Array(token.utf8), using: refreshKey)).base64URLEncodedString()
    }

    /// What the database stores for a refresh token: its SHA-256, hex. Tokens carry 256 bits of
    /// entropy, so a fast hash is enough; a leaked table yields no usable token.
    static func storageHash(of token: String) -> String {
        ContentHasher.sha256(token)
    }
}
