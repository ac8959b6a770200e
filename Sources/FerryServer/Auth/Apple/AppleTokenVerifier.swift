import Crypto
import CryptoExtras
import FerryCore
import FerrySecurity
import Foundation

/// What a verified Apple identity token says of the person signing in.
struct AppleIdentity: Sendable {
    /// Apple's stable user id for this team (`sub`).
    var subject: String
    /// The address Apple gives (a private relay address too), when the token carries one.
    var email: String?
    /// Whether Apple verified the address.
    var isEmailVerified: Bool
    /// Whether it is a private relay address.
    var isPrivateEmail: Bool
}

/// A verified server-to-server notice from Apple.
struct AppleNotice: Sendable {
    /// `consent-revoked`, `account-delete`, `email-disabled` or `email-enabled`.
    var type: String
    /// The Apple user it concerns.
    var subject: String
    /// When it happened.
    var eventTime: Date
    /// The relay address concerned, for the email notices.
    var email: String?
    /// Whether that address is a private relay address.
    var isPrivateEmail: Bool
}

/// Checks Apple's identity tokens and notices: RS256 under one of Apple's published keys, issuer
/// `https://appleid.apple.com`, an audience among the configured client ids, not expired, and for identity tokens the
/// nonce (the token carries the SHA-256, in hex, of the raw nonce the app sends).
struct AppleTokenVerifier: Sendable {
    static let issuer = "https://appleid.apple.com"

    let keys: AppleKeySet
    let clientIDs: Set<String>
    let now: @Sendable () -> Date

    func identity(idToken: String, nonce: String?) async throws -> AppleIdentity {
        let claims = try await verifiedClaims(idToken, what: "id_token")
        guard let exp = claims["exp"]?.numberValue, Date(timeIntervalSince1970: exp) > now() else {
            throw Self.refused("the id_token has expired; sign in with Apple again for a fresh one.")
        }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty, subject.utf8.count <= 255 else {
            throw Self.refused("the id_token has no subject (sub).")
        }
        switch (claims["nonce"]?.stringValue, nonce) {
        case (nil, nil):
            break
        case (let hashed?, let raw?):
            let expected = ContentHasher.sha256(raw)
            guard ConstantTime.isEqual(Data(expected.utf8), Data(hashed.lowercased().utf8)) else {
                throw Self.refused("the nonce does not match the id_token's (which holds the SHA-256 of the raw nonce, in hex).")
            }
        default:
            throw Self.refused("the nonce and the id_token's nonce must both be given or both be absent.")
        }
        let email = claims["email"]?.stringValue.map { $0.lowercased() }
        return AppleIdentity(
            subject: subject, email: email?.isEmpty == false ? email : nil,
            isEmailVerified: Self.flag(claims["email_verified"]), isPrivateEmail: Self.flag(claims["is_private_email"])
        )
    }

    func notice(payload: String) async throws -> AppleNotice {
        let claims = try await verifiedClaims(payload, what: "notice")
        // Apple sends `events` as a JSON string; an object is taken too.
        let events: [String: JSONValue]?
        switch claims["events"] {
        case .string(let text): events = JSONValue(jsonText: text)?.objectValue
        case .object(let members): events = members
        default: events = nil
        }
        guard let events, let type = events["type"]?.stringValue, let subject = events["sub"]?.stringValue, !subject.isEmpty else {
            throw Self.refused("the notice has no events with a type and a subject.")
        }
        let eventTime = events["event_time"]?.numberValue.map { Date(timeIntervalSince1970: $0 / 1000) }
            ?? claims["iat"]?.numberValue.map(Date.init(timeIntervalSince1970:)) ?? now()
        return AppleNotice(
            type: type, subject: subject, eventTime: min(eventTime, now()), email: events["email"]?.stringValue?.lowercased(),
            isPrivateEmail: Self.flag(events["is_private_email"])
        )
    }

    /// The claims of a token Apple signed for one of this server's client ids.
    private func verifiedClaims(_ text: String, what: String) async throws -> [String: JSONValue] {
        let token: RS256Token
        do {
            token = try RS256Token(text)
        } catch {
            throw Self.refused("the \(what) is refused: \(error.reason).")
        }
        let key: _RSA.Signing.PublicKey?
        do {
            key = try await keys.key(id: token.keyID)
        } catch let error as AppleKeySet.Unavailable {
            throw ServiceError(.unavailable, .unavailable, "Apple's signing keys cannot be fetched (\(error.reason)); retry shortly.",
                retryAfter: .seconds(10)
            )
        }
        guard let key, token.isSigned(by: key) else {
            throw Self.refused("the \(what) is not signed by one of Apple's keys.")
        }
        guard let claims = JSONValue(jsonText: String(decoding: token.payload, as: UTF8.self))?.objectValue else { throw Self.refused("the \(what)'s payload is not a JSON object.") }
        guard claims["iss"]?.stringValue == Self.issuer else { throw Self.refused("the \(what) was not issued by \(Self.issuer).") }
        let audiences: [String] = switch claims["aud"] {
        case .string(let audience): [audience]
        case .array(let items): items.compactMap(\.stringValue)
        default: []
        }
        guard audiences.contains(where: clientIDs.contains) else {
            throw Self.refused("the \(what) is for another app (aud); this server accepts: \(clientIDs.sorted().joined(separator: ", ")).")
        }
        return claims
    }

    /// Apple writes booleans as `true` or as `"true"`.
    private static func flag(_ value: JSONValue?) -> Bool {
        switch value {
        case .bool(let flag): flag
        case .string(let text): text == "true"
        default: false
        }
    }

    static func refused(_ reason: String) -> ServiceError {
        ServiceError(.invalidRequest, .invalidIDToken, "Bad ID token: \(reason)")
    }
}
