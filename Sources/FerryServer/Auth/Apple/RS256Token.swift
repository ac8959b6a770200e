import Crypto
import CryptoExtras
import FerrySecurity
import Foundation

/// A compact JWS (RFC 7515) signed with RS256, as Apple signs identity tokens and notices: split, its header read, and
/// its signature checked against a key. What the payload claims is the caller's to check.
struct RS256Token {
    /// The `kid` of the key that signed it.
    let keyID: String
    /// The payload's JSON bytes.
    let payload: Data
    private let signingInput: Substring
    private let signature: Data

    /// Why a token was refused before any key was tried.
    struct Malformed: Error {
        let reason: String
    }

    /// The longest token read: Apple's are about 1 KB.
    static let maximumLength = 16 * 1024

    init(_ text: String) throws(Malformed) {
        guard text.utf8.count <= Self.maximumLength else { throw Malformed(reason: "it is longer than \(Self.maximumLength) bytes") }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerData = Data(base64URLEncoded: String(parts[0])),
              let payload = Data(base64URLEncoded: String(parts[1])),
              let signature = Data(base64URLEncoded: String(parts[2]))
        else { throw Malformed(reason: "it is not a JWT (three base64url parts)") }
        struct Header: Decodable {
            var alg: String
            var kid: String?
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: headerData) else {
            throw Malformed(reason: "its header is not JSON with alg")
        }
        // The algorithm is fixed here, never taken from the token: `none` or HS256 with the public key cannot pass.
        guard header.alg == "RS256" else { throw Malformed(reason: "it is signed with \(header.alg.prefix(16)), not RS256") }
        guard let keyID = header.kid, !keyID.isEmpty, keyID.utf8.count <= 128 else { throw Malformed(reason: "its header names no key (kid)") }
        self.keyID = keyID
        self.payload = payload
        self.signingInput = text[parts[0].startIndex..<parts[1].endIndex]
        self.signature = signature
    }

    /// Whether `key` made the signature (RSASSA-PKCS1-v1_5 over SHA-256, as RS256 is defined).
    func isSigned(by key: _RSA.Signing.PublicKey) -> Bool {
        key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: Data(signingInput.utf8)),
            padding: .insecurePKCS1v1_5
        )
    }
}
