import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// What `ferry signup` and `ferry login` both take.
struct SignInArguments: ParsableArguments {
    @OptionGroup var options: ClientOptions
    @Argument(help: "The account's email address.") var email: String
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.") var passwordFromStandardInput = false
    @Flag(name: .customLong("no-sync"), help: "Skip the post-login sync (device registration, upload, keys, download).") var noSync = false

    /// Reads the password, signs in with `authenticate`, caches the schema, runs the post-login sync unless
    /// `--no-sync`, and prints who is now signed in (never the tokens).
    func signIn(prompt: String, _ authenticate: (AuthClient, String, String) async throws -> AuthSession, human: (AuthSession) -> String) async throws {
        let profile = try ClientProfile(options)
        let password = try PasswordInput.read(fromStandardInput: passwordFromStandardInput, prompt: prompt)
        let auth = profile.makeAuthClient()
        let session = try await authenticate(auth, email, password)
        await Self.finishSignIn(session, profile: profile, auth: auth, options: options, noSync: noSync, human: human)
    }

    /// What follows any sign-in: the schema cached, the post-login sync unless `noSync`, and who is signed in printed.
    static func finishSignIn(
        _ session: AuthSession, profile: ClientProfile, auth: AuthClient, options: ClientOptions, noSync: Bool, human: (AuthSession) -> String
    ) async {
        await profile.cacheSchemaQuietly(using: auth)
        let postLogin = noSync ? nil : await PostLoginReport.run(profile, auth: auth, options: options)
        Output.emit(json: options.json, human: human(session), [
            "user_id": session.user.id.lowercasedText, "email": session.user.email, "profile": options.profileName,
            "post_login": PostLoginReport.object(postLogin),
        ])
    }
}

/// `ferry signup EMAIL`: creates an account and signs this profile in.
struct SignUpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "signup", abstract: "Create an account and sign in.")

    @OptionGroup var arguments: SignInArguments

    func run() async throws {
        do {
            try await arguments.signIn(prompt: "Choose a password: ", { try await $0.signUp(email: $1, password: $2) }) {
                "Signed up and signed in as \($0.user.email)."
            }
        } catch let error as AuthError where error.code == .emailNotConfirmed {
            // A server with mail confirms the address first: the account exists, the session comes with the code.
            Output.emit(
                json: arguments.options.json,
                human: "Signed up. A confirmation code was mailed to \(arguments.email): finish with 'ferry verify \(arguments.email) CODE'.",
                ["confirmation_sent": true, "email": arguments.email, "profile": arguments.options.profileName]
            )
        }
    }
}

/// `ferry login EMAIL`: signs this profile in.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "login", abstract: "Sign in.")

    @OptionGroup var arguments: SignInArguments

    func run() async throws {
        try await arguments.signIn(prompt: "Password: ", { try await $0.signIn(email: $1, password: $2) }) { "Signed in as \($0.user.email)." }
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

/// `ferry account delete`: the account, for good.
struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account", abstract: "The signed-in account.", subcommands: [AccountPasswordCommand.self, AccountDeleteCommand.self]
    )
}

/// `ferry account password [--password-stdin]`: sets a new password (after a reset code, or within 5 minutes of signing in).
struct AccountPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "password", abstract: "Set a new password for the signed-in account.")

    @OptionGroup var options: ClientOptions
    @Flag(name: .customLong("password-stdin"), help: "Read the new password from standard input.") var passwordFromStandardInput = false

    func run() async throws {
        let auth = try ClientProfile(options).makeAuthClient()
        guard let session = try await auth.session else {
            throw CommandFailure(message: "Nobody is signed in on this profile: run 'ferry login EMAIL' or 'ferry verify EMAIL CODE' first.", code: .notSignedIn)
        }
        let password = try PasswordInput.read(fromStandardInput: passwordFromStandardInput, prompt: "New password: ")
        try await auth.updateUser(password: password)
        Output.emit(json: options.json, human: "The password of \(session.user.email) is changed; other devices are signed out.", [
            "changed": true, "email": session.user.email,
        ])
    }
}

/// `ferry account delete [--yes] [--password-stdin]`: deletes the signed-in account on the server (its records,
/// files, devices and sessions; its address is freed), then this profile's local data.
struct AccountDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete the signed-in account, its data and its devices' sessions, for good."
    )

    @OptionGroup var options: ClientOptions
    @Flag(help: "Do not ask for confirmation.") var yes = false
    @Flag(name: .customLong("password-stdin"), help: "Read the current password from standard input (needed 5 minutes after signing in).")
    var passwordFromStandardInput = false

    func run() async throws {
        let profile = try ClientProfile(options)
        let auth = profile.makeAuthClient()
        guard let session = try await auth.session else {
            throw CommandFailure(message: "Nobody is signed in on this profile: run 'ferry login EMAIL' first.", code: .notSignedIn)
        }
        if !yes { try confirm(session.user.email) }
        let password = passwordFromStandardInput ? try PasswordInput.read(fromStandardInput: true, prompt: "") : nil
        try await auth.deleteAccount(currentPassword: password)
        profile.removeLocalData()
        Output.emit(json: options.json, human: "Deleted the account \(session.user.email) and its data; this profile's local data is gone too.", [
            "deleted": true, "user_id": session.user.id.lowercasedText, "email": session.user.email,
        ])
    }

    /// Asks for the address on a terminal; anywhere else `--yes` must say it.
    private func confirm(_ email: String) throws {
        guard isatty(STDIN_FILENO) == 1 else {
            throw CommandFailure(message: "Deleting an account cannot be undone: pass --yes to confirm when not on a terminal.", status: 64)
        }
        FileHandle.standardError.write(Data("Delete the account \(email), all its data and every device's session? This cannot be undone. Type the address to confirm: ".utf8))
        guard readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased() == email.lowercased() else {
            throw CommandFailure(message: "Not confirmed: nothing was deleted.", status: 1)
        }
    }
}
