import FerrySecurity
import FerryServer
import FerryTesting
@testable import FerryVault
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

extension VaultTests {
    /// GitHub sign-in with PKCE: the authorize URL, the loopback redirect and its state check, and the code exchange
    /// through a live Ferry server against a local stand-in for GitHub's token endpoint (not GitHub itself).
    @Suite("GitHub OAuth with PKCE")
    struct GitHubOAuthTests {
        static let server = URL(string: "http://127.0.0.1:9")!

        /// Plays the browser: follows the redirect to `url` without waiting for the answer.
        static func browse(_ url: URL) {
            Task.detached { _ = try? await URLSession.shared.data(from: url) }
        }

        static func query(_ url: URL) -> [String: String] {
            Dictionary((URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { a, _ in a }
        }

        @Test("the authorize URL carries the client id, redirect, scope, state and the S256 challenge")
        func authorizeURL() async throws {
            let pkce = try #require(PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"))
            let oauth = GitHubOAuth(clientID: "Iv1.abc", server: Self.server, apiKey: "anon")
            let url = oauth.authorizationURL(redirectURI: "http://127.0.0.1:5000/callback", state: "xyz", pkce: pkce)
            #expect(url.absoluteString.hasPrefix("https://github.com/login/oauth/authorize?"))
            let query = Self.query(url)
            #expect(query["client_id"] == "Iv1.abc")
            #expect(query["redirect_uri"] == "http://127.0.0.1:5000/callback")
            #expect(query["scope"] == "repo" && query["state"] == "xyz")
            #expect(query["code_challenge"] == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
            #expect(query["code_challenge_method"] == "S256")
        }

        @Test("the loopback listener returns the code when state matches")
        func listenerAccepts() async throws {
            let listener = try LoopbackRedirectListener()
            defer { listener.close() }
            Self.browse(URL(string: "\(listener.redirectURI)?code=abc&state=s1")!)
            #expect(try await listener.waitForCode(expectedState: "s1", timeout: .seconds(20)) == "abc")
        }

        @Test("the loopback listener refuses a redirect whose state does not match")
        func listenerRefusesState() async throws {
            let listener = try LoopbackRedirectListener()
            defer { listener.close() }
            Self.browse(URL(string: "\(listener.redirectURI)?code=abc&state=forged")!)
            let error = await #expect(throws: VaultError.self) { try await listener.waitForCode(expectedState: "s1", timeout: .seconds(20)) }
            #expect(error?.code == .oauthFailed)
            #expect(error?.message.contains("state") == true)
        }

        @Test("a denied authorization fails with GitHub's reason")
        func listenerDenied() async throws {
            let listener = try LoopbackRedirectListener()
            defer { listener.close() }
            Self.browse(URL(string: "\(listener.redirectURI)?error=access_denied&state=s1")!)
            let error = await #expect(throws: VaultError.self) { try await listener.waitForCode(expectedState: "s1", timeout: .seconds(20)) }
            #expect(error?.message.contains("access_denied") == true)
        }

        @Test("the whole flow through Ferry's server and a stand-in token endpoint that checks the verifier")
        func fullFlow() async throws {
            try await GitHubTokenStandIn.with { standIn in
                try await LiveServer.with(.sqlite, configure: standIn.configure) { server in
                    let oauth = GitHubOAuth(clientID: standIn.clientID, server: server.baseURL, apiKey: server.server.keys.anonKey,
                                            callbackTimeout: .seconds(30))
                    let token = try await oauth.signIn { url in
                        let query = Self.query(url)
                        #expect(query["code_challenge_method"] == "S256")
                        let redirect = try #require(query["redirect_uri"])
                        let code = standIn.issueCode(challenge: try #require(query["code_challenge"]), redirectURI: redirect)
                        Self.browse(URL(string: "\(redirect)?code=\(code)&state=\(try #require(query["state"]))")!)
                    }
                    #expect(token.hasPrefix("gho_standin_"))
                    #expect(standIn.exchangeCount == 1)

                    // A code exchanged with another verifier is refused.
                    let pkce = PKCE()
                    let code = standIn.issueCode(challenge: pkce.challenge)
                    let error = await #expect(throws: VaultError.self) {
                        try await oauth.exchange(code: code, verifier: PKCE().verifier, redirectURI: "http://127.0.0.1:1/callback")
                    }
                    #expect(error?.code == .oauthFailed)
                    #expect(error?.message.contains("oauth_exchange_failed") == true)
                }
            }
        }
    }
}
