import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Sign-up, sign-in, user, bad input: Supabase Auth's wire behaviour on both engines.
@Suite("Auth: accounts")
struct AuthAccountTests {
    @Test("GET /settings says what GoTrue's does: email on, no phone, no anonymous sign-in; a sign-up without email or phone is 422 anonymous_provider_disabled")
    func settingsAndAnonymous() async throws {
        try await RouterServer.with(.sqlite, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let settings = try await auth.send("GET", "/auth/v1/settings")
            let body = try settings.json()
            let external = try #require(body["external"] as? [String: Bool])
            #expect(settings.status == 200 && external["email"] == true && external["phone"] == false && external["anonymous_users"] == false)
            #expect(external["apple"] == false, "no --apple-client-id")
            #expect(body["mailer_autoconfirm"] as? Bool == true && body["disable_signup"] as? Bool == false)
            #expect(try await auth.send("GET", "/auth/v1/settings", omitAPIKey: true).status == 401)

            let anonymous = try await auth.send("POST", "/auth/v1/signup", json: ["data": [:] as [String: String]])
            #expect(anonymous.status == 422 && anonymous.errorCode == "anonymous_provider_disabled")
            let phone = try await auth.send("POST", "/auth/v1/signup", json: ["phone": "+441234567890", "password": "correct horse 1"])
            #expect(phone.status == 422 && phone.errorCode == "phone_provider_disabled")
            let noPassword = try await auth.send("POST", "/auth/v1/signup", json: ["email": uniqueEmail()])
            #expect(noPassword.status == 400 && noPassword.errorCode == "bad_request")
        }
    }

    @Test("sign-up returns a Supabase session with the documented claims; sign-in finds the account", arguments: TestEngine.available)
    func signUpAndIn(_ engine: TestEngine) async throws {
        #expect(AuthConfiguration().passwordHashing == .owasp, "servers hash at OWASP's cost unless told otherwise")
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let email = uniqueEmail()
            let session = try await auth.signUp(email, data: ["first_name": "Ada"])
            #expect(session.tokenType == "bearer")
            #expect(session.expiresIn == 3600)
            #expect(session.user.email == email)
            #expect(session.user.userMetadata.objectValue?["first_name"] == .string("Ada"))
            #expect(session.refreshToken.count >= 22, "at least 128 random bits")
            let claims = try jwtClaims(session.accessToken)
            #expect(claims["sub"] as? String == session.user.id.uuidString.lowercased())
            #expect(claims["aud"] as? String == "authenticated" || (claims["aud"] as? [String]) == ["authenticated"])
            #expect(claims["role"] as? String == "authenticated")
            #expect(claims["email"] as? String == email)
            #expect(claims["iss"] as? String == "ferry")
            #expect(claims["session_id"] is String)
            let exp = try #require(claims["exp"] as? Double), iat = try #require(claims["iat"] as? Double)
            #expect(Int(exp - iat) == 3600)

            let again = try await auth.signIn(email.uppercased())
            #expect(again.user.id == session.user.id)
            #expect(again.user.lastSignInAt != nil)
            let reply = try await auth.send("GET", "/auth/v1/user", token: again.accessToken)
            let user = try auth.decode(reply, as: AuthUser.self)
            #expect(user.email == email)
            #expect(try reply.json()["id"] as? String == claims["sub"] as? String, "the id is spelled as the JWT's sub, lowercase")
        }
    }

    @Test("a wrong password and an unknown email get the same 400 invalid_credentials", arguments: TestEngine.available)
    func wrongCredentials(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let email = uniqueEmail()
            _ = try await auth.signUp(email)
            for (who, password) in [(email, "wrong horse 1"), (uniqueEmail("nobody"), "correct horse 1")] {
                let reply = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": who, "password": password])
                #expect(reply.status == 400)
                #expect(reply.errorCode == "invalid_credentials")
                #expect(try reply.json()["msg"] as? String == "Invalid login credentials")
            }
        }
    }

    @Test("duplicate email, weak password and invalid email are refused with Supabase's codes", arguments: TestEngine.available)
    func signUpRefusals(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let email = uniqueEmail()
            _ = try await auth.signUp(email)
            let duplicate = try await auth.send("POST", "/auth/v1/signup", json: ["email": email.uppercased(), "password": "another pass 2"])
            #expect(duplicate.status == 422)
            #expect(duplicate.errorCode == "user_already_exists")
            for weak in ["short1", "alllowercaseletters", "password123"] {
                let reply = try await auth.send("POST", "/auth/v1/signup", json: ["email": uniqueEmail(), "password": weak])
                #expect(reply.status == 422, "\(weak)")
                #expect(reply.errorCode == "weak_password", "\(weak)")
            }
            let invalid = try await auth.send("POST", "/auth/v1/signup", json: ["email": "not-an-email", "password": "correct horse 1"])
            #expect(invalid.status == 400)
            #expect(invalid.errorCode == "email_address_invalid")
        }
    }

    @Test("malformed, oversized, NUL-laden and keyless requests get clear errors, never a 500", arguments: TestEngine.available)
    func badInput(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let notJSON = try await auth.send("POST", "/auth/v1/signup", body: Data("{not json".utf8))
            #expect(notJSON.status == 400)
            #expect(notJSON.errorCode == "bad_request")
            let missing = try await auth.send("POST", "/auth/v1/signup", json: ["email": uniqueEmail()])
            #expect(missing.status == 400)
            #expect((try missing.json()["msg"] as? String)?.contains("missing password") == true)
            let wrongType = try await auth.send("POST", "/auth/v1/signup", json: ["email": 42, "password": "x"])
            #expect(wrongType.status == 400)
            let huge = try await auth.send("POST", "/auth/v1/signup", body: Data(repeating: UInt8(ascii: "a"), count: 200_000))
            #expect(huge.status == 413)
            #expect(huge.errorCode == "payload_too_large")
            let noKey = try await auth.send("POST", "/auth/v1/signup", json: ["email": uniqueEmail(), "password": "correct horse 1"], omitAPIKey: true)
            #expect(noKey.status == 401)
            #expect(noKey.errorCode == "invalid_api_key")
            let wrongKey = try await auth.send("GET", "/auth/v1/user", apiKey: "eyJhbGciOiJIUzI1NiJ9.e30.wrong")
            #expect(wrongKey.status == 401)
            #expect(wrongKey.errorCode == "invalid_api_key")
            let grant = try await auth.send("POST", "/auth/v1/token?grant_type=magic", json: [:])
            #expect(grant.status == 400)
            #expect(grant.errorCode == "unsupported_grant_type")
            // The caller is authenticated before anything else is read, as GoTrue does: no token, 401 whatever the scope.
            let anonymous = try await auth.send("POST", "/auth/v1/logout?scope=everywhere")
            #expect(anonymous.status == 401)
            #expect(anonymous.errorCode == "no_authorization")
            let session = try await auth.signUp(uniqueEmail())
            let scope = try await auth.send("POST", "/auth/v1/logout?scope=everywhere", token: session.accessToken)
            #expect(scope.status == 400)
            #expect(scope.errorCode == "validation_failed")
            // PostgreSQL cannot store U+0000 in text or jsonb: refused up front, on both engines alike.
            let nulEmail = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": "a\u{0}@example.com", "password": "x"])
            #expect(nulEmail.errorCode == "invalid_credentials")
            let nulSignUp = try await auth.send("POST", "/auth/v1/signup", json: ["email": "a\u{0}b@example.com", "password": "correct horse 1"])
            #expect(nulSignUp.errorCode == "email_address_invalid")
            let nulData = try await auth.send("POST", "/auth/v1/signup", json: ["email": uniqueEmail(), "password": "correct horse 1", "data": ["name": "a\u{0}"]])
            #expect(nulData.status == 400)
            #expect(nulData.errorCode == "validation_failed")
        }
    }

    @Test("missing, expired, tampered and foreign JWTs get 401, never a 500", arguments: TestEngine.available)
    func badTokens(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.auth.accessTokenLifetime = .seconds(1)
        }) { server in
            let auth = AuthHarness(server: server)
            let session = try await auth.signUp(uniqueEmail())
            let none = try await auth.send("GET", "/auth/v1/user")
            #expect(none.status == 401)
            #expect(none.errorCode == "no_authorization")
            // Tampered: the payload claims another role, the signature is the original one.
            var parts = session.accessToken.split(separator: ".").map(String.init)
            var claims = try jwtClaims(session.accessToken)
            claims["role"] = "service_role"
            parts[1] = try JSONSerialization.data(withJSONObject: claims).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let foreignKey = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIiwiYXVkIjoiYXV0aGVudGljYXRlZCIsImV4cCI6NDEwMjQ0NDgwMCwiaWF0IjoxLCJpc3MiOiJmZXJyeSIsImVtYWlsIjoiYUBiLmMiLCJyb2xlIjoiYXV0aGVudGljYXRlZCIsInNlc3Npb25faWQiOiIxIn0.bm90LXRoZS1yaWdodC1zaWduYXR1cmUtYXQtYWxsLW5vcGU"
            for token in [parts.joined(separator: "."), foreignKey, "garbage", "a.b.c", String(repeating: "x", count: 5000)] {
                let reply = try await auth.send("GET", "/auth/v1/user", token: token)
                #expect(reply.status == 401, "\(token.prefix(20))")
                #expect(reply.errorCode == "bad_jwt")
            }
            // Wait on the expiry itself (the token lives one second), not on a guess.
            let expiry = Date(timeIntervalSince1970: TimeInterval(session.expiresAt + 1))
            try await Task.sleep(for: .milliseconds(max(0, Int(expiry.timeIntervalSinceNow * 1000)) + 50))
            let expired = try await auth.send("GET", "/auth/v1/user", token: session.accessToken)
            #expect(expired.status == 401)
            #expect(expired.errorCode == "bad_jwt")
        }
    }

    @Test("PUT /user changes metadata and password", arguments: TestEngine.available)
    func updateUser(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let email = uniqueEmail()
            let session = try await auth.signUp(email, data: ["first_name": "Ada"])
            let updated = try auth.decode(
                try await auth.send("PUT", "/auth/v1/user", json: ["password": "new horse 22", "data": ["city": "Leeds"]], token: session.accessToken),
                as: AuthUser.self
            )
            #expect(updated.userMetadata.objectValue == ["first_name": .string("Ada"), "city": .string("Leeds")])
            _ = try await auth.signIn(email, password: "new horse 22")
            let old = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": email, "password": "correct horse 1"])
            #expect(old.errorCode == "invalid_credentials")
            let weak = try await auth.send("PUT", "/auth/v1/user", json: ["password": "abc"], token: session.accessToken)
            #expect(weak.errorCode == "weak_password")
        }
    }

    @Test("user_metadata merges as GoTrue does on both engines: top-level keys replace whole, null removes", arguments: TestEngine.available)
    func metadataMerge(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let session = try await auth.signUp(uniqueEmail(), data: ["a": ["x": 1, "y": 2], "b": 1, "s": "text"])
            let updated = try auth.decode(
                try await auth.send("PUT", "/auth/v1/user", json: ["data": ["a": ["x": 3], "b": NSNull(), "c": true, "d": ["nested": NSNull()]]], token: session.accessToken),
                as: AuthUser.self
            )
            #expect(updated.userMetadata == ["a": ["x": 3], "s": "text", "c": true, "d": ["nested": nil]])
        }
    }

    // Found by the fuzz run: SQLite's JSON functions stored 1.7976931348623157e308 as the 15-digit real
    // -1.79769313486232e+308, which is -Inf, and the next update failed with a 500.
    @Test("user_metadata keeps every number and key exactly through repeated updates on both engines", arguments: TestEngine.available)
    func metadataKeepsValuesExactly(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let session = try await auth.signUp(uniqueEmail())
            let extremes = #"{"max":-1.7976931348623157e308,"tenth":0.30000000000000004,"tiny":5e-324,"big":9007199254740993,"#
                + #""q\"uo\\te\u0016":[1452],"\ud83d\ude00":{"k":"\u0001"},"":[]}"#
            let expected: JSONValue = [
                "max": .number(-1.7976931348623157e308), "tenth": .number(0.30000000000000004), "tiny": .number(5e-324),
                "big": .number(9007199254740993), "q\"uo\\te\u{16}": [1452], "😀": ["k": "\u{1}"], "": [], "later": true,
            ]
            for patch in [#"{"data":\#(extremes)}"#, #"{"data":{"later":true}}"#, #"{"data":{"tenth":0.30000000000000004}}"#] {
                let reply = try await auth.send("PUT", "/auth/v1/user", body: Data(patch.utf8), token: session.accessToken)
                #expect(reply.status == 200, "\(reply.text)")
            }
            let user = try auth.decode(try await auth.send("GET", "/auth/v1/user", token: session.accessToken), as: AuthUser.self)
            #expect(user.userMetadata == expected)
        }
    }

    @Test("concurrent metadata updates each keep their keys on both engines", arguments: TestEngine.available)
    func concurrentMetadataUpdates(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: AuthHarness.fastHashing) { server in
            let auth = AuthHarness(server: server)
            let session = try await auth.signUp(uniqueEmail())
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await auth.send("PUT", "/auth/v1/user", json: ["data": ["key\(index)": index]], token: session.accessToken).status
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            let user = try auth.decode(try await auth.send("GET", "/auth/v1/user", token: session.accessToken), as: AuthUser.self)
            #expect(user.userMetadata.objectValue?.count == 8, "no update overwrote another's key")
        }
    }

    @Test("a password change on a session past the reauthentication window needs the current password; data changes do not", arguments: TestEngine.available)
    func passwordChangeNeedsReauthentication(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.auth.reauthenticationWindow = .zero
        }) { server in
            let auth = AuthHarness(server: server)
            let email = uniqueEmail()
            let stolen = try await auth.signUp(email)
            try await Task.sleep(for: .milliseconds(20))
            let refused = try await auth.send("PUT", "/auth/v1/user", json: ["password": "thief horse 9"], token: stolen.accessToken)
            #expect(refused.status == 400 && refused.errorCode == "reauthentication_needed")
            let wrong = try await auth.send("PUT", "/auth/v1/user", json: ["password": "thief horse 9", "current_password": "guess horse 1"], token: stolen.accessToken)
            #expect(wrong.status == 400 && wrong.errorCode == "reauthentication_needed")
            _ = try await auth.signIn(email, password: "correct horse 1")
            let metadata = try await auth.send("PUT", "/auth/v1/user", json: ["data": ["city": "Leeds"]], token: stolen.accessToken)
            #expect(metadata.status == 200, "changing metadata needs no reauthentication")

            let changed = try await auth.send("PUT", "/auth/v1/user", json: ["password": "new horse 22", "current_password": "correct horse 1"], token: stolen.accessToken)
            #expect(changed.status == 200)
            _ = try await auth.signIn(email, password: "new horse 22")
        }
    }

    @Test("failed sign-ins are limited per email with 429 and Retry-After", arguments: TestEngine.available)
    func rateLimit(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.auth.signInAttemptsPerEmail = 3
        }) { server in
            let auth = AuthHarness(server: server)
            let email = uniqueEmail()
            _ = try await auth.signUp(email)
            for _ in 0..<3 {
                let reply = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": email, "password": "wrong horse 1"])
                #expect(reply.status == 400)
            }
            let limited = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": email, "password": "correct horse 1"])
            #expect(limited.status == 429)
            #expect(limited.errorCode == "over_request_rate_limit")
            #expect(Int(limited.header("Retry-After") ?? "") ?? 0 > 0)
            // Another email from the same address is not limited by this one's count.
            let other = uniqueEmail()
            _ = try await auth.signUp(other)
            _ = try await auth.signIn(other)
        }
    }

    @Test("errors take GoTrue's newer shape for clients that send X-Supabase-Api-Version, as supabase-swift does")
    func supabaseAPIVersion() async throws {
        try await RouterServer.with(.sqlite, configure: AuthHarness.fastHashing) { server in
            var headers = ["apikey": server.server.keys.anonKey, "Content-Type": "application/json", "X-Supabase-Api-Version": "2024-01-01"]
            let wrong = try await server.send("POST", "/auth/v1/token?grant_type=password", headers: headers,
                body: Data(#"{"email":"nobody@example.com","password":"correct horse 1"}"#.utf8)
            )
            #expect(wrong.status == 400)
            #expect(try wrong.json()["code"] as? String == "invalid_credentials")
            #expect(try wrong.json()["message"] as? String == "Invalid login credentials")
            #expect(wrong.header("X-Supabase-Api-Version") == "2024-01-01")
            let weak = try await server.send("POST", "/auth/v1/signup", headers: headers, body: Data(#"{"email":"a@example.com","password":"short"}"#.utf8)
            )
            #expect(try weak.json()["code"] as? String == "weak_password")
            #expect((try weak.json()["weak_password"] as? [String: Any])?["reasons"] as? [String] == ["length", "characters"])
            headers["X-Supabase-Api-Version"] = nil
            let legacy = try await server.send("POST", "/auth/v1/signup", headers: headers, body: Data(#"{"email":"a@example.com","password":"short"}"#.utf8)
            )
            #expect(try legacy.json()["code"] as? Int == 422)
            #expect(try legacy.json()["error_code"] as? String == "weak_password")
        }
    }

    @Test("browsers get CORS preflight answers, as supabase-js needs")
    func corsPreflight() async throws {
        try await RouterServer.with(.sqlite) { server in
            let reply = try await server.send("OPTIONS", "/auth/v1/token?grant_type=password", headers: [
                "Origin": "https://app.example.com", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "apikey, content-type, x-client-info",
            ])
            #expect((200..<300).contains(reply.status))
            #expect(reply.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(reply.header("Access-Control-Allow-Headers")?.lowercased().contains("apikey") == true)
        }
    }

    @Test("sign-in and sign-up attempts are limited per client address", arguments: TestEngine.available)
    func rateLimitPerAddress(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.auth.signInAttemptsPerAddress = 3
        }) { server in
            let auth = AuthHarness(server: server)
            for _ in 0..<3 {
                let reply = try await auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": uniqueEmail(), "password": "wrong horse 1"])
                #expect(reply.status == 400)
            }
            let limited = try await auth.send("POST", "/auth/v1/signup", json: ["email": uniqueEmail(), "password": "correct horse 1"])
            #expect(limited.status == 429, "a fourth attempt from 127.0.0.1, whatever the email")
            #expect(limited.errorCode == "over_request_rate_limit")
        }
    }

    @Test("the signing secret and anon key are kept in the data folder with mode 0600 and reused on restart")
    func keysOnDisk() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let configuration = database.serverConfiguration
            let first = try await LiveServer.start(configuration)
            let anonKey = first.server.keys.anonKey
            await first.stop()
            for file in ["keys/jwt-secret", "keys/anon-key"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: database.folder + "/" + file)
                #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(file)")
            }
            let second = try await LiveServer.start(configuration)
            #expect(second.server.keys.anonKey == anonKey)
            await second.stop()
        }
    }
}
