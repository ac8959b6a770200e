import FerryCore
@testable import FerryVault
import FerryTesting
import Foundation
import Testing

extension VaultTests {
    /// Sync over HTTP against the real `git http-backend` with basic auth: the token is the password.
    @Suite("HTTPS token authentication against git http-backend")
    struct HTTPTokenTests {
        static let token = "ferry-test-token-\(UUID().uuidString)"

        private func withServer(_ body: (VaultFixture, GitHTTPServer) async throws -> Void) async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            try await GitTool.run(["--git-dir", fixture.bare.path(percentEncoded: false), "config", "http.receivepack", "true"])
            try await fixture.seed(["a.md": "alpha\n"])
            let server = try await GitHTTPServer.start(projectRoot: fixture.root.url, token: Self.token)
            defer { server.stop() }
            try await body(fixture, server)
        }

        @Test("the right token clones and pushes")
        func rightToken() async throws {
            try await withServer { fixture, server in
                let device = try fixture.makeEmptyDevice("laptop")
                try device.profile.credentialStore.save(VaultCredentials(token: Self.token))
                let cloned = try await device.vault.clone(from: server.url("remote.git"), options: device.options)
                #expect(cloned.pulledCommits == 1)
                #expect(try device.read("a.md") == "alpha\n")
                try device.write("b.md", "beta over http\n")
                let report = try await device.sync()
                #expect(report.pushed && report.committedFiles == ["b.md"])
                #expect(try await GitTool.tree(gitDirectory: device.gitDirectory) == fixture.remoteTree())
                // The token is never written into the repository's configuration.
                let config = try String(contentsOf: device.gitDirectory.appending(path: "config"), encoding: .utf8)
                #expect(!config.contains(Self.token))
            }
        }

        @Test("a wrong token fails with the mapped message after a bounded number of attempts")
        func wrongToken() async throws {
            try await withServer { fixture, server in
                let device = try fixture.makeEmptyDevice("laptop")
                try device.vault.initialiseRepository()
                try device.vault.setOrigin(server.url("remote.git"))
                try device.profile.credentialStore.save(VaultCredentials(token: "wrong-token"))
                try device.write("b.md", "beta\n")
                var options = device.options
                options.maxAuthenticationAttempts = 3
                let error = await #expect(throws: VaultError.self) { try await device.vault.sync(options) }
                #expect(error?.code == .authenticationFailed)
                #expect(error?.message.contains("Authentication failed") == true)
                #expect(error.map { !$0.description.contains("wrong-token") } == true)
                let refused = server.unauthorizedCount
                #expect(refused >= 1 && refused <= options.maxAuthenticationAttempts + 1, "\(refused) refused requests")
            }
        }

        @Test("no stored token: authentication fails at once, saying what to store")
        func noToken() async throws {
            try await withServer { fixture, server in
                let device = try fixture.makeEmptyDevice("laptop")
                try device.vault.initialiseRepository()
                try device.vault.setOrigin(server.url("remote.git"))
                let error = await #expect(throws: VaultError.self) { try await device.sync() }
                #expect(error?.code == .authenticationFailed)
                #expect(server.unauthorizedCount <= 2)
            }
        }

        @Test("a closed port maps to network unreachable")
        func unreachable() async throws {
            let fixture = try await VaultFixture()
            defer { fixture.remove() }
            let server = try await GitHTTPServer.start(projectRoot: fixture.root.url, token: Self.token)
            let url = server.url("remote.git")
            server.stop()
            let device = try fixture.makeEmptyDevice("laptop")
            try device.vault.initialiseRepository()
            try device.vault.setOrigin(url)
            let error = await #expect(throws: VaultError.self) { try await device.sync() }
            #expect(error?.code == .networkUnreachable)
        }

        @Test("over HTTP, a push the remote's hook declines fails with push_rejected; the commit stays local and goes out later")
        func hookDeclines() async throws {
            try await withServer { fixture, server in
                let device = try fixture.makeEmptyDevice("laptop")
                try device.profile.credentialStore.save(VaultCredentials(token: Self.token))
                _ = try await device.vault.clone(from: server.url("remote.git"), options: device.options)
                let hook = fixture.bare.appending(path: "hooks/pre-receive")
                try "#!/bin/sh\necho 'notes are read-only today' >&2\nexit 1\n".write(to: hook, atomically: true, encoding: .utf8)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hook.path(percentEncoded: false))
                try device.write("b.md", "beta\n")
                let error = await #expect(throws: VaultError.self) { try await device.sync() }
                #expect(error?.code == .pushRejected)
                #expect(error?.message.contains("rejected") == true)
                let local = try await GitTool.run(["--git-dir", device.gitDirectory.path(percentEncoded: false), "log", "-1", "--format=%s"])
                #expect(local.hasPrefix("vault backup: "))
                // Once the hook is gone, the next sync pushes what was committed.
                try FileManager.default.removeItem(at: hook)
                let report = try await device.sync()
                #expect(report.pushed && report.committedFiles.isEmpty)
                #expect(try await GitTool.tree(gitDirectory: device.gitDirectory) == fixture.remoteTree())
            }
        }
    }
}
