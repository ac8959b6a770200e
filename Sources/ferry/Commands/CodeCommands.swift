import ArgumentParser
import FerryClient
import FerryCore
import Foundation

/// `ferry send-code EMAIL [--reset-password]`: asks the server to mail a sign-in (or password-reset) code.
struct SendCodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send-code", abstract: "Mail a sign-in code (or, with --reset-password, a password-reset code) to an address."
    )

    @OptionGroup var options: ClientOptions
    @Argument(help: "The account's email address.") var email: String
    @Flag(name: .customLong("reset-password"), help: "Mail a password-reset code instead of a sign-in code.") var resetPassword = false

    func run() async throws {
        let auth = try ClientProfile(options).makeAuthClient()
        if resetPassword {
            try await auth.requestPasswordReset(email: email)
        } else {
            try await auth.requestSignInCode(email: email)
        }
        let type = resetPassword ? "recovery" : "email"
        // The server answers the same for an unknown address, so this says "if".
        Output.emit(
            json: options.json,
            human: "If an account has \(email), a code is on its way: sign in with 'ferry verify \(email) CODE --type \(type)'.",
            ["requested": true, "email": email, "type": type]
        )
    }
}

/// `ferry verify EMAIL CODE [--type signup|email|recovery|email_change]`: signs this profile in with a mailed code.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Sign in with a mailed code: a sign-up confirmation, a sign-in or reset code, or an address change."
    )

    @OptionGroup var options: ClientOptions
    @Argument(help: "The address the code was mailed to.") var email: String
    @Argument(help: "The 6-digit code.") var code: String
    @Option(help: "What the code is for: signup, email (a sign-in code), recovery or email_change.")
    var type = "signup"
    @Flag(name: .customLong("no-sync"), help: "Skip the post-login sync.") var noSync = false

    func run() async throws {
        guard let codeType = AuthClient.CodeType(rawValue: type) else {
            throw CommandFailure(message: "--type is signup, email, recovery or email_change, not '\(type)'", status: 64)
        }
        let profile = try ClientProfile(options)
        let auth = profile.makeAuthClient()
        let session = try await auth.verify(email: email, code: code, type: codeType)
        await SignInArguments.finishSignIn(session, profile: profile, auth: auth, options: options, noSync: noSync) {
            codeType == .recovery
                ? "Signed in as \($0.user.email) to reset the password: set it now with 'ferry account password'."
                : "Signed in as \($0.user.email)."
        }
    }
}
