import Crypto
import FerrySecurity
import Foundation
import Synchronization

/// The JWT that authenticates Ferry to APNs: ES256 over `{"alg":"ES256","kid":…}.{"iss":team,"iat":…}`.
///
/// Made again every 40 minutes: APNs refuses a token older than an hour and answers `TooManyProviderTokenUpdates`
/// to one renewed more often than every 20 minutes.
final class APNsProviderToken: Sendable {
    static let lifetime: TimeInterval = 40 * 60

    private let key: P256.Signing.PrivateKey
    private let keyID: String
    private let teamID: String
    private let cached = Mutex<(token: String, issuedAt: Date)?>(nil)

    /// Why the key file was refused.
    struct KeyFileError: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads the `.p8` key; its contents never reach a log or an error message.
    init(keyFile: String, keyID: String, teamID: String) throws {
        guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
            throw KeyFileError(description: "cannot read the APNs key file \(keyFile)")
        }
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw KeyFileError(description: "the APNs key file \(keyFile) holds no P-256 private key in PEM (an AuthKey_….p8 from Apple)")
        }
        self.keyID = keyID
        self.teamID = teamID
    }

    /// The token in force, made anew when it is older than ``lifetime``.
    func current(now: Date = Date()) throws -> String {
        try cached.withLock { cached in
            if let cached, now.timeIntervalSince(cached.issuedAt) < Self.lifetime, now >= cached.issuedAt { return cached.token }
            let token = try make(issuedAt: now)
            cached = (token, now)
            return token
        }
    }

    /// Forgets `token` after APNs called it expired, unless a newer one replaced it already (a late answer to an
    /// older request must not throw away a fresh token: APNs throttles new ones).
    func invalidate(_ token: String) {
        cached.withLock { cached in
            if cached?.token == token { cached = nil }
        }
    }

    private func make(issuedAt: Date) throws -> String {
        let header = #"{"alg":"ES256","kid":"\#(keyID.jsonEscaped)"}"#
        let claims = #"{"iss":"\#(teamID.jsonEscaped)","iat":\#(Int(issuedAt.timeIntervalSince1970))}"#
        let input = Data(header.utf8).base64URLEncodedString() + "." + Data(claims.utf8).base64URLEncodedString()
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + signature.rawRepresentation.base64URLEncodedString()
    }
}

extension String {
    /// The string as the inside of a JSON string literal.
    fileprivate var jsonEscaped: String {
        var escaped = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
