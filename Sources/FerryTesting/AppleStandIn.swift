import Crypto
import CryptoExtras
import FerrySecurity
import FerryServer
import Foundation
import Hummingbird
import Logging

/// A local stand-in for Apple's Sign in with Apple keys (`GET /auth/keys`, a JWKS as Apple publishes it), which also
/// signs identity tokens and server-to-server notices the way Apple does (RS256, issuer `https://appleid.apple.com`).
///
/// Written from Apple's published documentation; Apple's private keys cannot exist here. A second key, never
/// published, signs forgeries under the published key's id. Other test processes mint tokens over HTTP:
/// `POST /mint/id-token` and `POST /mint/notice` (see ``mint(_:)``).
public final class AppleStandIn: Sendable {
    /// The audience its tokens name unless told otherwise: an app's bundle id.
    public let clientID = "com.example.ferry-notes"
    /// `http://127.0.0.1:PORT/auth/keys`.
    public let keysURL: URL
    /// The stand-in's base URL, for minting over HTTP.
    public var baseURL: URL { keysURL.deletingLastPathComponent().deletingLastPathComponent() }

    private let signer: Signer

    struct Signer: Sendable {
        let keyID = "stand-in-apple-key"
        let key: _RSA.Signing.PrivateKey
        let forger: _RSA.Signing.PrivateKey

        var keySet: String {
            let primitives = try! key.publicKey.getKeyPrimitives()
            return """
                {"keys":[{"kty":"RSA","kid":"\(keyID)","use":"sig","alg":"RS256",\
                "n":"\(primitives.modulus.base64URLEncodedString())","e":"\(primitives.publicExponent.base64URLEncodedString())"}]}
                """
        }

        func sign(_ claims: [String: Any], forged: Bool) -> String {
            let header = try! JSONSerialization.data(withJSONObject: ["alg": "RS256", "kid": keyID, "typ": "JWT"], options: .sortedKeys)
            let payload = try! JSONSerialization.data(withJSONObject: claims, options: .sortedKeys)
            let input = header.base64URLEncodedString() + "." + payload.base64URLEncodedString()
            let signature = try! (forged ? forger : key).signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
            return input + "." + signature.rawRepresentation.base64URLEncodedString()
        }
    }

    private init(keysURL: URL, signer: Signer) {
        self.keysURL = keysURL
        self.signer = signer
    }

    /// Points a server configuration at this stand-in: its keys URL and client id.
    public func configure(_ configuration: inout ServerConfiguration) {
        configuration.apple.clientIDs = [clientID]
        configuration.apple.keysURL = keysURL.absoluteString
    }

    /// The SHA-256 of a raw nonce in hex: what an app passes to Apple, and what the token then carries.
    public static func hashedNonce(_ raw: String) -> String {
        ContentHasher.sha256(raw)
    }

    /// An identity token as Apple issues one. `rawNonce` is hashed into the token as apps do; `forged` signs with a key
    /// Apple never published.
    public func identityToken(
        subject: String, email: String? = nil, emailVerified: Bool = true, isPrivateEmail: Bool = false, rawNonce: String? = nil,
        audience: String? = nil, issuer: String = "https://appleid.apple.com", expiresIn: TimeInterval = 600, forged: Bool = false
    ) -> String {
        let now = Date().timeIntervalSince1970
        var claims: [String: Any] = [
            "iss": issuer, "aud": audience ?? clientID, "sub": subject, "iat": Int(now), "exp": Int(now + expiresIn),
            "auth_time": Int(now), "nonce_supported": true,
        ]
        if let email {
            claims["email"] = email
            // Apple writes these two as strings.
            claims["email_verified"] = emailVerified ? "true" : "false"
            claims["is_private_email"] = isPrivateEmail ? "true" : "false"
        }
        if let rawNonce { claims["nonce"] = Self.hashedNonce(rawNonce) }
        return signer.sign(claims, forged: forged)
    }

    /// A server-to-server notice's `payload`, as Apple posts it: `events` is a JSON string.
    public func notice(type: String, subject: String, email: String? = nil, eventTime: Date = Date(), forged: Bool = false) -> String {
        var event: [String: Any] = ["type": type, "sub": subject, "event_time": Int(eventTime.timeIntervalSince1970 * 1000)]
        if let email {
            event["email"] = email
            event["is_private_email"] = "true"
        }
        let events = String(decoding: try! JSONSerialization.data(withJSONObject: event, options: .sortedKeys), as: UTF8.self)
        let now = Int(Date().timeIntervalSince1970)
        return signer.sign(["iss": "https://appleid.apple.com", "aud": clientID, "iat": now, "jti": UUID().uuidString, "events": events], forged: forged)
    }

    /// Mints over HTTP for another process (the supabase-py check): `POST /mint/id-token` with `{sub, email?,
    /// email_verified?, nonce? (raw), aud?, expired?, forged?}` and `POST /mint/notice` with `{type, sub, email?, forged?}`
    /// answer `{"token": "…"}`.
    private static func mint(_ path: String, _ body: [String: Any], _ standIn: AppleStandIn) -> String? {
        let forged = body["forged"] as? Bool ?? false
        switch path {
        case "id-token":
            guard let subject = body["sub"] as? String else { return nil }
            return standIn.identityToken(
                subject: subject, email: body["email"] as? String, emailVerified: body["email_verified"] as? Bool ?? true,
                rawNonce: body["nonce"] as? String, audience: body["aud"] as? String,
                expiresIn: body["expired"] as? Bool == true ? -60 : 600, forged: forged
            )
        case "notice":
            guard let type = body["type"] as? String, let subject = body["sub"] as? String else { return nil }
            return standIn.notice(type: type, subject: subject, email: body["email"] as? String, forged: forged)
        default:
            return nil
        }
    }

    /// Runs `body` with a stand-in listening on a free loopback port, then stops it.
    public static func with<Result>(_ body: (AppleStandIn) async throws -> Result) async throws -> Result {
        let signer = Signer(key: try _RSA.Signing.PrivateKey(keySize: .bits2048), forger: try _RSA.Signing.PrivateKey(keySize: .bits2048))
        let standInBox = Box()
        let router = Router()
        router.get("auth/keys") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: signer.keySet)))
        }
        router.post("mint/:kind") { request, context -> Response in
            var request = request
            let buffer = try await request.collectBody(upTo: 64 * 1024)
            guard let standIn = standInBox.value, let kind = context.parameters.get("kind"),
                  let object = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any],
                  let token = mint(kind, object, standIn)
            else { return Response(status: .badRequest) }
            let data = try JSONSerialization.data(withJSONObject: ["token": token])
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        return try await LoopbackRouter.serve(router, label: "ferry.testing.apple-stand-in") { port in
            let standIn = AppleStandIn(keysURL: URL(string: "http://127.0.0.1:\(port)/auth/keys")!, signer: signer)
            standInBox.value = standIn
            return try await body(standIn)
        }
    }

    /// The stand-in, for the mint route, set once it exists.
    private final class Box: @unchecked Sendable {
        // Written once before any request can arrive (the port is only known after), read afterwards.
        var value: AppleStandIn?
    }
}
