import CLibGit2
import Foundation
@testable import FerryVault
import Testing

extension VaultTests {
    /// The one function that turns libgit2 failures into messages a person can act on.
    @Suite("libgit2 error mapping")
    struct ErrorMappingTests {
        struct Case: Sendable, CustomTestStringConvertible {
            var failure: GitFailure
            var context: GitErrorContext
            var code: VaultError.Code
            var mentions: String
            var testDescription: String { "\(failure.message) → \(code)" }
        }

        static let cases: [Case] = [
            Case(failure: GitFailure(code: GIT_EAUTH.rawValue, errorClass: 34, message: "authentication required but no callback set"),
                 context: .fetch, code: .authenticationFailed, mentions: "Authentication failed"),
            Case(failure: GitFailure(code: -1, errorClass: Int32(GIT_ERROR_HTTP.rawValue), message: "unexpected http status code: 401"),
                 context: .push, code: .authenticationFailed, mentions: "token"),
            Case(failure: GitFailure(code: GIT_ENONFASTFORWARD.rawValue, errorClass: 0, message: "cannot push non-fastforwardable reference"),
                 context: .push, code: .rejectedNonFastForward, mentions: "not a fast-forward"),
            Case(failure: GitFailure(code: -1, errorClass: 0, message: "refs/heads/main rejected: non-fast-forward"),
                 context: .push, code: .rejectedNonFastForward, mentions: "not a fast-forward"),
            Case(failure: GitFailure(code: -1, errorClass: Int32(GIT_ERROR_NET.rawValue), message: "failed to connect to 127.0.0.1: Connection refused"),
                 context: .fetch, code: .networkUnreachable, mentions: "Network unreachable"),
            Case(failure: GitFailure(code: -1, errorClass: Int32(GIT_ERROR_NET.rawValue), message: "failed to resolve address for github.invalid: Name or service not known"),
                 context: .fetch, code: .networkUnreachable, mentions: "Network unreachable"),
            Case(failure: GitFailure(code: GIT_ELOCKED.rawValue, errorClass: Int32(GIT_ERROR_INDEX.rawValue), message: "failed to create locked file '/v/.git/index.lock': File exists"),
                 context: .local, code: .repositoryLocked, mentions: "locked"),
            Case(failure: GitFailure(code: -1, errorClass: Int32(GIT_ERROR_OS.rawValue), message: "could not open '/v/a.md' for writing: Operation not permitted"),
                 context: .local, code: .permissionDenied, mentions: "pick the folder again"),
            Case(failure: GitFailure(code: GIT_ECERTIFICATE.rawValue, errorClass: Int32(GIT_ERROR_SSL.rawValue), message: "the SSL certificate is invalid"),
                 context: .fetch, code: .certificateInvalid, mentions: "certificate"),
            Case(failure: GitFailure(code: -1, errorClass: Int32(GIT_ERROR_HTTP.rawValue), message: "unexpected http status code: 404"),
                 context: .fetch, code: .remoteNotFound, mentions: "origin"),
            Case(failure: GitFailure(code: -1, errorClass: 0, message: "too many redirects or authentication replays"),
                 context: .credentialsExhausted(attempts: 3), code: .authenticationFailed, mentions: "3 times"),
            Case(failure: GitFailure(code: -1, errorClass: 0, message: "object not found - no match for id (deadbeef)"),
                 context: .local, code: .gitFailed, mentions: "no match for id"),
        ]

        @Test("each failure maps to its code and an actionable message", arguments: cases)
        func mapping(_ testCase: Case) {
            let error = VaultError.mapped(testCase.failure, context: testCase.context)
            #expect(error.code == testCase.code)
            #expect(error.message.localizedCaseInsensitiveContains(testCase.mentions), "\(error.message)")
            #expect(error.detail != nil)
        }

        @Test("credentials in URLs never reach a message")
        func redaction() {
            let error = VaultError.mapped(GitFailure(code: -1, errorClass: 0, message: "failed to fetch https://ada:ghp_secret@example.com/x.git"))
            #expect(!error.message.contains("ghp_secret") && !(error.detail ?? "").contains("ghp_secret"))
        }
    }
}
