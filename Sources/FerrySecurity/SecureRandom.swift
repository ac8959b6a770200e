import Crypto
import Foundation

/// Random values from the system's cryptographically secure generator.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// An opaque token of `byteCount` random bytes (default 32, i.e. 256 bits), base64url without padding.
    public static func token(byteCount: Int = 32) -> String {
        Data(bytes(byteCount)).base64URLEncodedString()
    }
}

extension Data {
    /// Base64url (RFC 4648 §5) without padding, as used in tokens and JWTs.
    public func base64URLEncodedString() -> String {
        base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url with or without padding; `nil` for anything else.
    public init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
