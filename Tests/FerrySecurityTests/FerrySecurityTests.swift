import FerrySecurity
import Foundation
import Testing

@Suite("Constant-time comparison and secure random tokens")
struct FerrySecurityTests {
    @Test("equal and unequal byte strings, including different lengths and prefixes")
    func constantTimeEquality() {
        #expect(ConstantTime.isEqual("secret-token", "secret-token"))
        #expect(!ConstantTime.isEqual("secret-token", "secret-tokeN"))
        #expect(!ConstantTime.isEqual("secret", "secret-token"), "a prefix is not equal")
        #expect(!ConstantTime.isEqual("", "x"))
        #expect(ConstantTime.isEqual("", ""))
        #expect(!ConstantTime.isEqual([UInt8](repeating: 0, count: 256), [UInt8](repeating: 0, count: 0)), "length differences of 256 still differ")
    }

    @Test("tokens carry 256 bits by default, are URL-safe and do not repeat")
    func tokens() {
        let tokens = (0..<1000).map { _ in SecureRandom.token() }
        #expect(Set(tokens).count == tokens.count)
        for token in tokens.prefix(20) {
            #expect(token.count == 43)
            #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            #expect(Data(base64URLEncoded: token)?.count == 32)
        }
    }

    @Test("base64url round-trips every length")
    func base64URL() {
        for length in 0..<40 {
            let data = Data(SecureRandom.bytes(length))
            #expect(Data(base64URLEncoded: data.base64URLEncodedString()) == data)
        }
        #expect(Data(base64URLEncoded: "not base64!") == nil)
    }
}
