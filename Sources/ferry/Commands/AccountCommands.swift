import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// Prints who is now signed in; never the tokens.
private func reportSignIn(_ session: AuthSession, options: ClientOptions, human: String, postLogin: PostLoginSyncResult?) {
    Output.emit(json: options.json, human: human, [
        "user_id": session.user.id.lowercasedText, "email": session.user.email, "profile": options.profileName,
        "post_login": PostLoginReport.object(postLogin),
    ])
}

/// `ferry signup EMAIL`: creates an account and signs this profile in.
struct SignUpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "signup", abstract: "Create an account and sign in.")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The account's email address.") var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.") var passwordFromStandardInput = false
    @Flag(name: .customLong("no-sync"), help: "Skip the post-login sync (device registration, upload, keys, download).") var noSync = false

    func run() async throws {
        let profile = try ClientProfile(options)
        let password = try PasswordInput.read(fromStandardInput: passwordFromStandardInput, prompt: "Choose a password: ")
        let auth = profile.makeAuthClient()
        let session = try await auth.signUp(email: email, password: password)
        await profile.cacheSchemaQuietly(using: auth)
        let postLogin = noSync ? nil : await PostLoginReport.run(profile, auth: auth, options: options)
        reportSignIn(session, options: options, human: "Signed up and signed in as \(session.user.email).", postLogin: postLogin)
    }
}

/// `ferry login EMAIL`: signs this profile in.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "login", abstract: "Sign in.")

    @OptionGroup var options: ClientOptions
    @Argument(help: "The account's email address.") var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.") var passwordFromStandardInput = false
    @Flag(name: .customLong("no-sync"), help: "Skip the post-login sync (device registration, upload, keys, download).") var noSync = false

    func run() async throws {
        let profile = try ClientProfile(options)
        let password = try PasswordInput.read(fromStandardInput: passwordFromStandardInput, prompt: "Password: ")
        let auth = profile.makeAuthClient()
        let session = try await auth.signIn(email: email, password: password)
        await profile.cacheSchemaQuietly(using: auth)
        let postLogin = noSync ? nil : await PostLoginReport.run(profile, auth: auth, options: options)
        reportSignIn(session, options: options, human: "Signed in as \(session.user.email).", postLogin: postLogin)
    }
}

/// `ferry logout [--all]`: signs this profile out (every device with `--all`).
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logout", abstract: "Sign out this profile, or every device with --all.")

    @OptionGroup var options: ClientOptions
    @Flag(help: "Sign out every device of this account.") var all = false

    func run() async throws {
        let profile = try ClientProfile(options)
        let unsent = (try? profile.openStore().pendingCount()) ?? 0
        try await profile.makeAuthClient().signOut(scope: all ? .global : .local)
        var human = all ? "Signed out on every device." : "Signed out."
        if unsent > 0 {
            human += " \(unsent) unsent change(s) stay on this device; they are sent after you sign in to this account again ('ferry login', then 'ferry sync')."
        }
        Output.emit(json: options.json, human: human, ["signed_out": true, "all": all, "unsent": unsent])
    }
}

/// `ferry whoami`: the signed-in user, confirmed by the server.
struct WhoAmICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Show the signed-in user.")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let auth = try ClientProfile(options).makeAuthClient()
        guard try await auth.session != nil else {
            throw CommandFailure(message: "Nobody is signed in on this profile: run 'ferry login EMAIL' first.", code: .notSignedIn)
        }
        let user = try await auth.user()
        Output.emit(json: options.json, human: "\(user.email) (\(user.id.lowercasedText))", [
            "user_id": user.id.lowercasedText, "email": user.email,
        ])
    }
}
