@testable import FerryServer
import Testing

@Suite("Password hashing")
struct PasswordHasherTests {
    @Test("OWASP's scrypt cost by default, a salt per hash, and verification")
    func owaspDefaults() async throws {
        let hasher = PasswordHasher(parameters: .owasp)
        let first = try await hasher.hash("correct horse 1")
        #expect(first.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
        #expect(try await hasher.verify("correct horse 1", against: first))
        #expect(try await !hasher.verify("correct horse 2", against: first))
        let light = PasswordHasher(parameters: .init(logN: 10, blockSize: 8, parallelism: 1))
        #expect(try await light.hash("same") != (try await light.hash("same")), "each hash has its own salt")
    }

    @Test("an unknown user never verifies; malformed stored hashes are refused, not crashed on")
    func unknownAndMalformed() async throws {
        let hasher = PasswordHasher(parameters: .init(logN: 10, blockSize: 8, parallelism: 1))
        #expect(try await !hasher.verify("anything", against: nil))
        for stored in ["", "$scrypt$", "$scrypt$ln=99,r=8,p=1$AAAA$AAAA", "$bcrypt$x$y$z", "$scrypt$ln=10,r=8,p=1$!!$!!"] {
            #expect(try await !hasher.verify("anything", against: stored), "\(stored)")
        }
    }

    @Test("a hash made with one cost still verifies after the default changes")
    func costIsStoredWithTheHash() async throws {
        let old = try await PasswordHasher(parameters: .init(logN: 10, blockSize: 8, parallelism: 1)).hash("correct horse 1")
        #expect(try await PasswordHasher(parameters: .owasp).verify("correct horse 1", against: old))
    }
}
