import ArgumentParser
import FerryClient
import FerryVault
import Foundation

/// `ferry vault auth token|github`: stores the credentials vault sync uses.
struct VaultAuthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "auth", abstract: "Store vault credentials.", subcommands: [Token.self, GitHub.self])

    /// `ferry vault auth token`: an HTTPS token from standard input.
    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store an HTTPS token (read from standard input) for the vault's origin.",
            discussion: "The token is sent as the password; it is kept in the profile with mode 0600 and never printed."
        )

        @OptionGroup var options: ClientOptions
        @Option(help: "The HTTPS user name. [default: the URL's, else x-access-token]") var username: String?

        func run() async throws {
            try await vaultCommand {
                let token = (readLine(strippingNewline: true) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                guard !token.isEmpty else { throw CommandFailure(message: "no token on standard input", status: 64) }
                let store = try options.vaultProfile().credentialStore
                var credentials = try store.load()
                credentials.token = token
                credentials.username = username
                try store.save(credentials)
                Output.emit(json: options.json, human: "Token stored for vault sync.", ["token_set": true])
            }
        }
    }

    /// `ferry vault auth github`: GitHub sign-in with PKCE through Ferry's server.
    struct GitHub: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "github",
            abstract: "Sign in with GitHub (OAuth with PKCE); the code is exchanged through Ferry's server.",
            discussion: "Prints the authorize URL; open it in a browser on this machine. The redirect comes back to a loopback port."
        )

        @OptionGroup var options: ClientOptions
        @Option(name: .customLong("client-id"), help: "The GitHub OAuth app's client id (FERRY_GITHUB_CLIENT_ID).") var clientID: String?
        @Option(name: .customLong("authorize-url"), help: "GitHub's authorize page. [default: https://github.com/login/oauth/authorize]")
        var authorizeURL: String?
        @Option(help: "Seconds to wait for the browser.") var timeout: Int = 300

        func run() async throws {
            try await vaultCommand {
                let profile = try options.vaultProfile()
                guard let clientID = clientID ?? options.environment["FERRY_GITHUB_CLIENT_ID"], !clientID.isEmpty else {
                    throw CommandFailure(message: "pass --client-id (or set FERRY_GITHUB_CLIENT_ID)", status: 64)
                }
                let client = try ClientProfile(options)
                var oauth = FerryVault.GitHubOAuth(
                    clientID: clientID, server: client.endpoint.baseURL, apiKey: client.settings.apiKey, callbackTimeout: .seconds(timeout)
                )
                if let authorizeURL {
                    guard let url = URL(string: authorizeURL) else { throw CommandFailure(message: "'\(authorizeURL)' is not a URL", status: 64) }
                    oauth.authorizeURL = url
                }
                let token = try await oauth.signIn { url in
                    FileHandle.standardOutput.write(Data("Open this URL to sign in with GitHub:\n\(url.absoluteString)\n".utf8))
                }
                var credentials = try profile.credentialStore.load()
                credentials.token = token
                try profile.credentialStore.save(credentials)
                Output.emit(json: options.json, human: "Signed in with GitHub; the token is stored for vault sync.", ["token_set": true])
            }
        }
    }
}
