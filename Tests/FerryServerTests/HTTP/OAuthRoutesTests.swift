import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `POST /oauth/v1/github/token` against a local stand-in for GitHub's token endpoint (not GitHub itself).
@Suite("GitHub OAuth code exchange")
struct OAuthRoutesTests {
    static func exchange(_ server: any ServerUnderTest, _ body: [String: String], apiKey: String? = nil) async throws -> HTTPClient.Reply {
        try await server.send("POST", "/oauth/v1/github/token",
            headers: ["apikey": apiKey ?? server.server.keys.anonKey, "Content-Type": "application/json"],
            body: try JSONSerialization.data(withJSONObject: body)
        )
    }

    @Test("unconfigured: 400 oauth_not_configured (a client's request the server cannot serve, not a server fault)")
    func notConfigured() async throws {
        try await LiveServer.with(.sqlite) { server in
            let reply = try await Self.exchange(server, ["code": "c", "code_verifier": PKCE().verifier])
            #expect(reply.status == 400)
            #expect(try reply.json()["error_code"] as? String == "oauth_not_configured")
        }
    }

    @Test("a redirect from the token URL is not followed: the secret goes to the configured URL only")
    func redirectNotFollowed() async throws {
        try await GitHubTokenStandIn.with { standIn in
            try await LiveServer.with(.sqlite, configure: { configuration in
                standIn.configure(&configuration)
                configuration.githubOAuth.tokenURL = standIn.redirectingURL.absoluteString
            }) { server in
                let pkce = PKCE()
                let reply = try await Self.exchange(server, ["code": standIn.issueCode(challenge: pkce.challenge), "code_verifier": pkce.verifier])
                #expect(reply.status == 502)
                #expect(try reply.json()["error_code"] as? String == "oauth_upstream_unavailable")
                #expect(standIn.exchangeCount == 0, "the redirect was followed with the client secret")
            }
        }
    }

    @Test("an http token URL off loopback is refused at start-up; https and loopback http are accepted", arguments: [
        ("http://github.example.com/login/oauth/access_token", false), ("http://10.0.0.7/token", false), ("ftp://127.0.0.1/x", false),
        ("https://github.example.com/login/oauth/access_token", true), ("http://127.0.0.1:9/token", true),
        ("http://[::1]:9/token", true), ("http://localhost:9/token", true),
    ])
    func tokenURLScheme(_ url: String, _ isAccepted: Bool) async throws {
        var configuration = GitHubOAuthConfiguration()
        configuration.clientID = "id"
        configuration.clientSecret = "secret"
        configuration.tokenURL = url
        #expect((configuration.tokenURLProblem == nil) == isAccepted, "\(url)")
        guard !isAccepted else { return }
        try await TestDatabase.with(.sqlite) { database in
            var server = database.serverConfiguration
            server.githubOAuth = configuration
            await #expect(throws: ServerStartupError.self) { try await FerryServer.prepare(server, logger: .testing) }
        }
    }

    @Test("exchanges are limited per client address, before the body is read")
    func rateLimited() async throws {
        try await GitHubTokenStandIn.with { standIn in
            try await LiveServer.with(.sqlite, configure: { configuration in
                standIn.configure(&configuration)
                configuration.githubOAuth.exchangesPerAddress = 2
            }) { server in
                for _ in 0..<2 {
                    #expect(try await Self.exchange(server, ["code": "c", "code_verifier": PKCE().verifier]).status == 400)
                }
                let limited = try await server.send("POST", "/oauth/v1/github/token",
                    headers: ["apikey": server.server.keys.anonKey, "Content-Type": "application/json"], body: Data("not json".utf8)
                )
                #expect(limited.status == 429)
                #expect(try limited.json()["error_code"] as? String == "over_request_rate_limit")
                #expect(Int(limited.header("Retry-After") ?? "") ?? 0 > 0)
            }
        }
    }

    @Test("the right verifier gets a token; the secret is added by the server; a wrong verifier or reused code gets 400")
    func exchange() async throws {
        try await GitHubTokenStandIn.with { standIn in
            try await LiveServer.with(.sqlite, configure: standIn.configure) { server in
                let pkce = PKCE()
                let code = standIn.issueCode(challenge: pkce.challenge)
                let good = try await Self.exchange(server, ["code": code, "code_verifier": pkce.verifier])
                #expect(good.status == 200)
                #expect((try good.json()["access_token"] as? String)?.hasPrefix("gho_standin_") == true)
                #expect(try good.json()["token_type"] as? String == "bearer")

                let reused = try await Self.exchange(server, ["code": code, "code_verifier": pkce.verifier])
                #expect(reused.status == 400)
                #expect(try reused.json()["error_code"] as? String == "oauth_exchange_failed")

                let other = standIn.issueCode(challenge: pkce.challenge)
                let wrong = try await Self.exchange(server, ["code": other, "code_verifier": PKCE().verifier])
                #expect(wrong.status == 400)
                #expect(try wrong.json()["error_code"] as? String == "oauth_exchange_failed")
                #expect(!wrong.text.contains(standIn.clientSecret))
            }
        }
    }

    @Test("bad input gets a clear 400 and never reaches GitHub", arguments: [
        #"{"code": "c"}"#, #"{"code": "", "code_verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"}"#,
        #"{"code": "c", "code_verifier": "short"}"#, "not json",
    ])
    func badInput(_ body: String) async throws {
        try await GitHubTokenStandIn.with { standIn in
            try await LiveServer.with(.sqlite, configure: standIn.configure) { server in
                let reply = try await server.send("POST", "/oauth/v1/github/token",
                    headers: ["apikey": server.server.keys.anonKey, "Content-Type": "application/json"], body: Data(body.utf8)
                )
                #expect(reply.status == 400)
                #expect(["bad_request", "validation_failed"].contains(try reply.json()["error_code"] as? String))
                #expect(standIn.exchangeCount == 0)
            }
        }
    }

    @Test("no apikey: 401; token endpoint down: 502 oauth_upstream_unavailable")
    func failures() async throws {
        try await LiveServer.with(.sqlite, configure: { configuration in
            configuration.githubOAuth.clientID = "id"
            configuration.githubOAuth.clientSecret = "secret"
            configuration.githubOAuth.tokenURL = "http://127.0.0.1:9/login/oauth/access_token"
            configuration.githubOAuth.timeout = .seconds(5)
        }) { server in
            let noKey = try await server.send("POST", "/oauth/v1/github/token", body: Data("{}".utf8))
            #expect(noKey.status == 401)
            let down = try await Self.exchange(server, ["code": "c", "code_verifier": PKCE().verifier])
            #expect(down.status == 502)
            #expect(try down.json()["error_code"] as? String == "oauth_upstream_unavailable")
        }
    }
}
