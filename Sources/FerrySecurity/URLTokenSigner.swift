import Crypto
import Foundation

/// Short tokens that carry a small JSON claim and an HMAC-SHA256 over it: `base64url(claim).base64url(mac)`. For
/// signed URLs, which must work without a session; the key never leaves the server.
public struct URLTokenSigner: Sendable {
    private let key: SymmetricKey

    /// A signer keyed by `secret`, separated from other uses of it by `purpose`.
    public init(secret: [UInt8], purpose: String) {
        let derived = HMAC<SHA256>.authenticationCode(for: Data(purpose.utf8), using: SymmetricKey(data: secret))
        key = SymmetricKey(data: Data(derived))
    }

    /// A token for `claim`.
    public func sign(_ claim: Data) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: claim, using: key)
        return Self.base64URL(claim) + "." + Self.base64URL(Data(mac))
    }

    /// The claim of a token this signer made, or `nil` for anything else (compared in constant time).
    public func verify(_ token: String) -> Data? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, token.utf8.count <= 4096, let claim = Self.data(base64URL: parts[0]), let mac = Self.data(base64URL: parts[1]) else {
            return nil
        }
        let expected = HMAC<SHA256>.authenticationCode(for: claim, using: key)
        return ConstantTime.isEqual(Data(expected), mac) ? claim : nil
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func data(base64URL text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
