import FerrySecurity
import Testing

@Suite("PKCE (RFC 7636, S256)")
struct PKCETests {
    @Test("the RFC 7636 Appendix B vector")
    func appendixB() throws {
        let pkce = try #require(PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"))
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(pkce.method == "S256")
        #expect(PKCE.verify(verifier: pkce.verifier, challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"))
        #expect(!PKCE.verify(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXK", challenge: pkce.challenge))
    }

    @Test("fresh verifiers are 43 unreserved characters, differ, and match their challenge")
    func fresh() {
        let pairs = (0..<100).map { _ in PKCE() }
        #expect(Set(pairs.map(\.verifier)).count == 100)
        for pair in pairs.prefix(10) {
            #expect(pair.verifier.count == 43)
            #expect(PKCE(verifier: pair.verifier) == pair)
            #expect(PKCE.verify(verifier: pair.verifier, challenge: pair.challenge))
        }
    }

    @Test("verifiers too short, too long or with reserved characters are refused", arguments: [
        String(repeating: "a", count: 42), String(repeating: "a", count: 129), String(repeating: "a", count: 42) + "+", String(repeating: "é", count: 50),
    ])
    func invalid(_ verifier: String) {
        #expect(PKCE(verifier: verifier) == nil)
    }
}
