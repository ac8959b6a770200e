import AuthenticationServices
import CryptoKit
import FerryClient
import FerryCore
import SwiftUI

/// Sign in with Apple, or with a 6-digit code mailed to an existing account.
struct SignInView: View {
    let model: AppModel
    @State private var nonce = ""
    @State private var email = ""
    @State private var code = ""
    @State private var codeSent = false
    @State private var isWorking = false
    @State private var message: String?

    var body: some View {
        Form {
            Section {
                SignInWithAppleButton(.signIn) { request in
                    // Apple gets the nonce's SHA-256 in hex; Ferry gets the raw nonce, hashes it and compares.
                    nonce = UUID().uuidString
                    request.requestedScopes = [.fullName, .email]
                    request.nonce = SHA256.hash(data: Data(nonce.utf8)).map { String(format: "%02x", $0) }.joined()
                } onCompletion: { result in
                    appleFinished(result)
                }
                .frame(height: 48)
            }
            Section("Or a code by e-mail") {
                TextField("E-mail address", text: $email)
                    .textContentType(.emailAddress)
                    .keyboardType(.emailAddress)
                    .textInputAutocapitalization(.never)
                    .autocorrectionDisabled()
                if codeSent {
                    TextField("6-digit code", text: $code)
                        .textContentType(.oneTimeCode)
                        .keyboardType(.numberPad)
                    Button("Sign in") { perform { try await model.signIn(email: email, code: code) } }
                } else {
                    // The server mails existing accounts only, and answers the same for any address.
                    Button("Mail me a code") {
                        perform {
                            try await model.auth.requestSignInCode(email: email)
                            codeSent = true
                        }
                    }
                }
            }
            .disabled(isWorking)
            if let message {
                Section { Text(message).foregroundStyle(.red) }
            }
        }
    }

    private func appleFinished(_ result: Result<ASAuthorization, any Error>) {
        switch result {
        case .success(let authorization):
            guard let credential = authorization.credential as? ASAuthorizationAppleIDCredential,
                  let idToken = credential.identityToken.flatMap({ String(data: $0, encoding: .utf8) }) else {
                message = "Apple returned no identity token."
                return
            }
            // Apple gives the name on the first authorization only; the server keeps it in the user's metadata.
            let name = credential.fullName?.formatted()
            let rawNonce = nonce
            perform {
                try await model.signInWithApple(idToken: idToken, rawNonce: rawNonce, fullName: name?.isEmpty == false ? name : nil)
            }
        case .failure(let error):
            if (error as? ASAuthorizationError)?.code != .canceled { message = error.localizedDescription }
        }
    }

    private func perform(_ work: @escaping @MainActor () async throws -> Void) {
        isWorking = true
        Task {
            defer { isWorking = false }
            do {
                try await work()
                message = nil
            } catch {
                message = (error as? any FerryError)?.message ?? error.localizedDescription
            }
        }
    }
}
