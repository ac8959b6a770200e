import Crypto
import CryptoExtras
import FerryCore
import FerrySecurity
import Foundation

/// Hashes passwords with scrypt and a per-user salt, and verifies them in constant time.
///
/// Hashes are stored as `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` (base64url), so raising the cost later
/// keeps old hashes verifiable. scrypt at OWASP's cost takes 128 MiB and a good fraction of a second,
/// so at most ``maximumConcurrentHashes`` run at once; the rest queue.
public struct PasswordHasher: Sendable {
    /// scrypt's cost parameters.
    public struct Parameters: Sendable, Hashable {
        /// log2 of N, the CPU/memory cost.
        public var logN: Int
        /// The block size r.
        public var blockSize: Int
        /// The parallelism p.
        public var parallelism: Int

        /// OWASP's recommendation: N=2^17, r=8, p=1 (128 MiB).
        public static let owasp = Parameters(logN: 17, blockSize: 8, parallelism: 1)

        /// Creates parameters.
        public init(logN: Int, blockSize: Int, parallelism: Int) {
            self.logN = logN
            self.blockSize = blockSize
            self.parallelism = parallelism
        }

        var memory: Int { 128 * blockSize * (1 << logN) * parallelism + 1 << 20 }
    }

    let parameters: Parameters
    private let gate: AsyncGate
    /// Verified against when the email is unknown, so that answer takes as long as a wrong password:
    /// the same cost and format as a real hash, with random bytes no password derives.
    private let decoy: String

    /// At most this many hashes run at once (one per core on the machines Ferry targets).
    public static let maximumConcurrentHashes = 2

    /// Creates a hasher that hashes with `parameters`, queueing at most `queueLength` hashes behind the running ones.
    public init(parameters: Parameters, queueLength: Int = AuthConfiguration().passwordHashQueueLength) {
        self.parameters = parameters
        self.gate = AsyncGate(limit: Self.maximumConcurrentHashes, maximumWaiting: queueLength)
        self.decoy = Self.format(parameters, salt: SecureRandom.bytes(16), key: SecureRandom.bytes(32))
    }

    /// A new salted hash of `password`; 429 when the queue is full.
    public func hash(_ password: String) async throws -> String {
        try await run { try Self.hash(password, parameters: self.parameters) }
    }

    /// Whether `password` matches `stored`; with `stored == nil` (unknown user) it does the same work and answers false.
    /// Throws 429 when the queue is full, and `CancellationError` when the request gave up while it waited.
    public func verify(_ password: String, against stored: String?) async throws -> Bool {
        let target = stored ?? decoy
        let matches = try await run { (try? Self.verify(password, against: target)) ?? false }
        return stored != nil && matches
    }

    /// Whether `stored` was made at another cost than this hasher's (`--password-hash-cost` changed since): hashed
    /// again at the next successful sign-in, so accounts move to the new cost and answer as fast as unknown addresses.
    public func needsRehash(_ stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: true)
        return parts.count == 4 && Parameters(parsing: parts[1]) != parameters
    }

    private func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        do {
            return try await gate.run(work)
        } catch is AsyncGate.Full {
            throw ServiceError(.rateLimited, .overRequestRateLimit, "The server is busy checking passwords; retry in 2 seconds.",
                retryAfter: .seconds(2)
            )
        }
    }

    static func hash(_ password: String, parameters: Parameters) throws -> String {
        let salt = SecureRandom.bytes(16)
        return format(parameters, salt: salt, key: try derive(password, salt: salt, parameters: parameters))
    }

    private static func format(_ parameters: Parameters, salt: [UInt8], key: [UInt8]) -> String {
        "$scrypt$ln=\(parameters.logN),r=\(parameters.blockSize),p=\(parameters.parallelism)$"
            + Data(salt).base64URLEncodedString() + "$" + Data(key).base64URLEncodedString()
    }

    static func verify(_ password: String, against stored: String) throws -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: true)
        guard parts.count == 4, parts[0] == "scrypt",
              let parameters = Parameters(parsing: parts[1]),
              let salt = Data(base64URLEncoded: String(parts[2])),
              let expected = Data(base64URLEncoded: String(parts[3]))
        else { return false }
        let key = try derive(password, salt: Array(salt), parameters: parameters)
        return ConstantTime.isEqual(key, expected)
    }

    private static func derive(_ password: String, salt: [UInt8], parameters: Parameters) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: 32,
            rounds: 1 << parameters.logN, blockSize: parameters.blockSize, parallelism: parameters.parallelism,
            maxMemory: parameters.memory
        )
        return key.withUnsafeBytes { Array($0) }
    }
}

extension PasswordHasher.Parameters {
    /// Reads `ln=17,r=8,p=1`.
    init?(parsing text: Substring) {
        var values: [Substring: Int] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=")
            guard parts.count == 2, let value = Int(parts[1]) else { return nil }
            values[parts[0]] = value
        }
        guard let logN = values["ln"], let r = values["r"], let p = values["p"],
              (1...22).contains(logN), (1...32).contains(r), (1...16).contains(p)
        else { return nil }
        self.init(logN: logN, blockSize: r, parallelism: p)
    }
}
