import FerryTesting
import Foundation
import Testing

/// `ferry vault …` as a person runs it, against a bare repository served by the real `git`.
@Suite("ferry vault commands", .serialized)
struct VaultCommandTests {
    struct Workspace {
        let root: URL
        var home: URL { root.appending(path: "home") }
        var bare: URL { root.appending(path: "remote.git") }

        init() throws {
            root = FileManager.default.temporaryDirectory.appending(path: "ferry-vault-cli-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try Self.git(["init", "--quiet", "--bare", "--initial-branch=main", root.appending(path: "remote.git").path(percentEncoded: false)])
        }

        func remove() { try? FileManager.default.removeItem(at: root) }

        func ferry(_ arguments: [String], profile: String = "laptop", input: String? = nil) async throws -> FerryProcess.Exit {
            try await FerryProcess.run(["vault"] + arguments + ["--home", home.path(percentEncoded: false), "--profile", profile], input: input)
        }

        @discardableResult
        static func git(_ arguments: [String]) throws -> String {
            var environment = ProcessInfo.processInfo.environment
            environment["GIT_CONFIG_NOSYSTEM"] = "1"
            let process = try ChildProcess("git", arguments: arguments, environment: environment, standardError: .null)
            let data = process.standardOutput!.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test("open, init, origin set, sync, ls, status and diagnose on a fresh folder; a second profile clones it")
    func tour() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let vault = workspace.root.appending(path: "Notes")
        try FileManager.default.createDirectory(at: vault.appending(path: "Ideas"), withIntermediateDirectories: true)
        try "first note\n".write(to: vault.appending(path: "todo.md"), atomically: true, encoding: .utf8)
        try "an idea\n".write(to: vault.appending(path: "Ideas/idea.md"), atomically: true, encoding: .utf8)

        let opened = try await workspace.ferry(["open", vault.path(percentEncoded: false)])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout.contains("repository: none yet"))
        let initialised = try await workspace.ferry(["init", "--storage", "separate"])
        #expect(initialised.status == 0, "\(initialised.stderr)")
        #expect(!FileManager.default.fileExists(atPath: vault.appending(path: ".git").path(percentEncoded: false)))
        #expect(try await workspace.ferry(["origin", "set", workspace.bare.path(percentEncoded: false)]).status == 0)

        let synced = try await workspace.ferry(["sync", "--hostname", "laptop"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.hasPrefix("Synced: committed 2 files"))
        #expect(synced.stdout.contains("pushed 1 commit"))
        #expect(try Workspace.git(["--git-dir", workspace.bare.path(percentEncoded: false), "ls-tree", "-r", "--name-only", "main"]) == "Ideas/idea.md\ntodo.md")

        let listed = try await workspace.ferry(["ls"])
        #expect(listed.stdout == "Ideas/\ntodo.md\n")
        let status = try await workspace.ferry(["status", "--json"])
        let statusJSON = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(statusJSON?["origin_source"] as? String == "vault")
        #expect(statusJSON?["repository_kind"] as? String == "storage")

        let diagnosed = try await workspace.ferry(["diagnose", "--json"])
        let diagnostics = try JSONSerialization.jsonObject(with: Data(diagnosed.stdout.utf8)) as? [String: Any]
        #expect(diagnostics?["repository_found"] as? Bool == true)
        #expect(diagnostics?["repository_kind"] as? String == "storage")
        #expect(diagnostics?["origin_source"] as? String == "vault")
        #expect((diagnostics?["storage_repository_count"] as? Int) == 1)
        let human = try await workspace.ferry(["diagnose"])
        #expect(human.stdout.hasPrefix("vault=") && human.stdout.contains("repo=found(storage)"))

        let copy = workspace.root.appending(path: "Phone")
        let cloned = try await workspace.ferry(["clone", workspace.bare.path(percentEncoded: false), copy.path(percentEncoded: false)], profile: "phone")
        #expect(cloned.status == 0, "\(cloned.stderr)")
        #expect(cloned.stdout.contains("pulled 1 commit"))
        #expect(try String(contentsOf: copy.appending(path: "todo.md"), encoding: .utf8) == "first note\n")

        // A change on the laptop reaches the phone when it opens its vault with pull-on-open.
        try "second line\n".write(to: vault.appending(path: "Ideas/more.md"), atomically: true, encoding: .utf8)
        #expect(try await workspace.ferry(["sync"]).status == 0)
        let reopened = try await workspace.ferry(["open", copy.path(percentEncoded: false), "--pull-on-open"], profile: "phone")
        #expect(reopened.status == 0, "\(reopened.stderr)")
        #expect(reopened.stdout.contains("Synced: pulled 1 commit"))
        #expect(FileManager.default.fileExists(atPath: copy.appending(path: "Ideas/more.md").path(percentEncoded: false)))
    }

    @Test("auth token reads standard input, stores it with mode 0600 and never prints it")
    func authToken() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let stored = try await workspace.ferry(["auth", "token"], input: "ghp_never_printed\n")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(!stored.stdout.contains("ghp_never_printed") && !stored.stderr.contains("ghp_never_printed"))
        let file = workspace.home.appending(path: "profiles/laptop/vault-credentials.json")
        let mode = try FileManager.default.attributesOfItem(atPath: file.path(percentEncoded: false))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let empty = try await workspace.ferry(["auth", "token"], input: "\n")
        #expect(empty.status == 64)
    }

    @Test("failures end with one line and the error code")
    func failures() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let noVault = try await workspace.ferry(["sync"])
        #expect(noVault.status == 1)
        #expect(noVault.stderr.hasPrefix("ferry: error: No vault is chosen") && noVault.stderr.contains("(vault_missing)"))
        let missing = try await workspace.ferry(["open", workspace.root.appending(path: "absent").path(percentEncoded: false)])
        #expect(missing.status == 1 && missing.stderr.contains("(vault_missing)"))
        try await #require(workspace.ferry(["open", workspace.root.path(percentEncoded: false)]).status == 0)
        let tooFast = try await workspace.ferry(["sync", "--watch", "--interval", "5"])
        #expect(tooFast.status == 64 && tooFast.stderr.contains("at least 10 seconds"))
        let diagnosed = try await workspace.ferry(["diagnose"])
        #expect(diagnosed.stdout.contains("repo=missing") && diagnosed.stdout.contains("signal repo-missing"))
        let noClient = try await workspace.ferry(["auth", "github"])
        #expect(noClient.status == 64 && noClient.stderr.contains("--client-id"))
    }

    @Test("serve takes the GitHub OAuth app from flags and FERRY_ variables, validates the token URL, never logs the secret")
    func serveGitHubSettings() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let bad = try await FerryProcess.run(["serve", "--port", "0", "--data-dir", workspace.root.path(percentEncoded: false), "--github-token-url", "not a url"])
        #expect(bad.status == 64 && bad.stderr.contains("--github-token-url must be an http(s) URL"))
        let server = try FerryProcess(
            ["serve", "--port", "0", "--data-dir", workspace.root.path(percentEncoded: false), "--github-client-id", "Iv1.test"],
            environment: ["FERRY_GITHUB_CLIENT_SECRET": "never-logged-secret", "FERRY_LOG_LEVEL": "trace"]
        )
        let banner = await server.waitForLine(startingWith: "Ferry listening on")
        #expect(banner != nil)
        server.signal()
        let exit = await server.waitForExit()
        #expect(!exit.stderr.contains("never-logged-secret") && !exit.stdout.contains("never-logged-secret"))
    }
}
