import Foundation
import JWTKit
import Synchronization

/// Access tokens this server has verified, with their claims, until they expire: every authenticated request presents
/// one, and a device presents the same token for an hour. A token's text decides its claims and signature, so a token
/// seen verified needs only its expiry checked again; decoding and verifying it anew cost a twentieth of a no-op pull.
final class VerifiedTokens: Sendable {
    private let capacity: Int
    private let entries = Mutex<[String: AccessTokenClaims]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The claims of `token` when it was verified before and has not expired since.
    func claims(of token: String, now: Date) -> AccessTokenClaims? {
        entries.withLock { entries in
            guard let claims = entries[token] else { return nil }
            guard claims.exp.value > now else {
                entries.removeValue(forKey: token)
                return nil
            }
            return claims
        }
    }

    /// Remembers a verified token; when full, the expired ones go first, then all (a burst of new tokens).
    func insert(_ token: String, claims: AccessTokenClaims, now: Date) {
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.exp.value > now }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[token] = claims
        }
    }
}
