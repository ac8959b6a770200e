import CryptoExtras
import FerryCore
import FerrySecurity
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Apple's published signing keys, fetched once, cached, and fetched again when a token names a key not yet seen
/// (at most once per ``AppleSignInConfiguration/minimumKeyRefreshInterval``; concurrent callers share one fetch).
actor AppleKeySet {
    typealias Fetch = @Sendable () async throws -> Data

    private let fetch: Fetch
    private let minimumInterval: Duration
    private var keys: [String: _RSA.Signing.PublicKey] = [:]
    private var lastFetch: ContinuousClock.Instant?
    /// Why the last fetch failed, while it is the last one: a token naming a key not yet seen cannot be checked.
    private var lastFailure: String?
    private var fetching: Task<[String: _RSA.Signing.PublicKey], any Error>?

    /// Apple's keys could not be fetched (network, Apple down): no token can be checked, which is not the client's fault.
    struct Unavailable: Error {
        let reason: String
    }

    init(minimumInterval: Duration, fetch: @escaping Fetch) {
        self.minimumInterval = minimumInterval
        self.fetch = fetch
    }

    /// Fetches from `configuration.keysURL` over HTTPS.
    init(configuration: AppleSignInConfiguration) {
        let url = URL(string: configuration.keysURL)
        let timeout = configuration.timeout.timeInterval
        self.init(minimumInterval: configuration.minimumKeyRefreshInterval) {
            guard let url else { throw Unavailable(reason: "the keys URL is not a URL") }
            var request = URLRequest(url: url, timeoutInterval: timeout)
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            let (data, response) = try await URLSession.shared.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                throw Unavailable(reason: "Apple's keys answered HTTP \((response as? HTTPURLResponse)?.statusCode ?? 0)")
            }
            return data
        }
    }

    /// The key with id `keyID`, fetching the set when it is unknown and the last fetch is old enough; `nil` when Apple
    /// has no such key.
    func key(id keyID: String) async throws -> _RSA.Signing.PublicKey? {
        if let key = keys[keyID] { return key }
        if let lastFetch, ContinuousClock.now - lastFetch < minimumInterval, fetching == nil {
            if let lastFailure { throw Unavailable(reason: lastFailure) }
            return nil
        }
        let task: Task<[String: _RSA.Signing.PublicKey], any Error>
        if let fetching {
            task = fetching
        } else {
            let fetch = self.fetch
            task = Task { try Self.parse(try await fetch()) }
            fetching = task
        }
        defer { fetching = nil }
        do {
            let fetched = try await task.value
            keys = fetched
            lastFetch = .now
            lastFailure = nil
        } catch {
            lastFetch = .now
            lastFailure = "\(error)"
            throw Unavailable(reason: "\(error)")
        }
        return keys[keyID]
    }

    /// The RSA keys of a JWKS document (RFC 7517), by key id; other key types are skipped.
    static func parse(_ data: Data) throws -> [String: _RSA.Signing.PublicKey] {
        struct KeySet: Decodable {
            struct Key: Decodable {
                var kty: String
                var kid: String?
                var alg: String?
                var n: String?
                var e: String?
            }
            var keys: [Key]
        }
        guard data.count <= 1 << 20 else { throw Unavailable(reason: "the key set is larger than 1 MiB") }
        let set = try JSONDecoder().decode(KeySet.self, from: data)
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for key in set.keys where key.kty == "RSA" && (key.alg ?? "RS256") == "RS256" {
            guard let id = key.kid, let n = key.n.flatMap({ Data(base64URLEncoded: $0) }), let e = key.e.flatMap({ Data(base64URLEncoded: $0) }),
                  let publicKey = try? _RSA.Signing.PublicKey(n: n, e: e)
            else { continue }
            keys[id] = publicKey
        }
        return keys
    }
}
