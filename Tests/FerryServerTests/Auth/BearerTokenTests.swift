@testable import FerryServer
import Testing

/// `Authorization` headers as clients spell them: the scheme in any case, blanks around the token.
@Suite("Auth: the bearer token of an Authorization header")
struct BearerTokenTests {
    @Test("reads the token", arguments: [
        ("Bearer abc.def", "abc.def"), ("bearer abc", "abc"), ("BEARER abc", "abc"), ("Bearer   abc \t", "abc"),
        ("bEaReR a b", "a b"),
    ])
    func reads(_ header: String, _ token: String) {
        #expect(AuthService.bearerToken(header) == token)
    }

    @Test("refuses other schemes and empty tokens", arguments: ["", "Bearer", "Bearer ", "Bearer    ", "Basic abc", "Bearerabc", "Bearer\tabc", "Bearer\u{0}abc", " Bearer abc", "Béarer abc"])
    func refuses(_ header: String) {
        #expect(AuthService.bearerToken(header) == nil)
    }
}
