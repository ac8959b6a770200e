import FerryClient
import FerrySecurity
import FerryTesting
import Foundation
import Synchronization
import Testing

@Suite("FileDeviceKeyStore")
struct FileDeviceKeyStoreTests {
    @Test("the first use creates device.key, mode 0600 in a 0700 folder, holding the base64 of the 32 private-key bytes")
    func createsOwnerOnlyFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileDeviceKeyStore(folder: folder.url.appending(path: "profile"))
        #expect(try store.load() == nil)

        let keyPair = try store.loadOrCreate()
        #expect(store.fileURL.lastPathComponent == "device.key")
        #expect(try mode(of: store.fileURL) == 0o600)
        #expect(try mode(of: store.folder) == 0o700)
        let contents = try String(contentsOf: store.fileURL, encoding: .utf8)
        #expect(contents == keyPair.privateKeyBase64)
        #expect(Data(base64Encoded: contents)?.count == 32)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.folder.path) == ["device.key"])
    }

    @Test("reloading, from this store or a new one, returns the same key")
    func reloadReturnsSameKey() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let created = try FileDeviceKeyStore(folder: folder.url).loadOrCreate()
        let again = try FileDeviceKeyStore(folder: folder.url).loadOrCreate()
        let loaded = try #require(try FileDeviceKeyStore(folder: folder.url).load())
        #expect(again.publicKeyBase64 == created.publicKeyBase64)
        #expect(loaded.privateKeyRawRepresentation == created.privateKeyRawRepresentation)
        #expect(try mode(of: folder.url.appending(path: "device.key")) == 0o600)
    }

    @Test("devices started at once on a new profile all end up with the first key, never overwriting it")
    func concurrentCreation() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let keys = Mutex<[String]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            do {
                let keyPair = try FileDeviceKeyStore(folder: folder.url).loadOrCreate()
                keys.withLock { $0.append(keyPair.publicKeyBase64) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let published = keys.withLock { Set($0) }
        #expect(published.count == 1)
        let stored = try #require(try FileDeviceKeyStore(folder: folder.url).load())
        #expect(published == [stored.publicKeyBase64])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["device.key"])
    }

    @Test("a key file written by hand with a trailing newline still loads")
    func trailingNewline() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let keyPair = DeviceKeyPair.generate()
        try OwnerOnlyFile.write(Data((keyPair.privateKeyBase64 + "\n").utf8), to: folder.url.appending(path: "device.key"))
        #expect(try FileDeviceKeyStore(folder: folder.url).loadOrCreate().publicKey == keyPair.publicKey)
    }

    @Test(
        "a malformed key file is invalid_private_key, names the file, and is left untouched",
        arguments: ["", "not a key", Data(count: 31).base64EncodedString(), Data(count: 64).base64EncodedString()]
    )
    func malformedFile(contents: String) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileDeviceKeyStore(folder: folder.url)
        try OwnerOnlyFile.write(Data(contents.utf8), to: store.fileURL)

        for attempt in [{ _ = try store.load() }, { _ = try store.loadOrCreate() }] as [() throws -> Void] {
            let error = #expect(throws: EncryptionError.self) { try attempt() }
            #expect(error?.code == .invalidPrivateKey)
            #expect(error?.message.contains(store.fileURL.path) == true)
            #expect(error?.message.contains("delete it") == true)
        }
        #expect(try String(contentsOf: store.fileURL, encoding: .utf8) == contents)
    }

    @Test("an error about the key file never contains the key")
    func errorsDoNotLeakKeys() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = FileDeviceKeyStore(folder: folder.url)
        let almost = String(DeviceKeyPair.generate().privateKeyBase64.dropLast())
        try OwnerOnlyFile.write(Data(almost.utf8), to: store.fileURL)
        let error = #expect(throws: EncryptionError.self) { try store.load() }
        #expect(error?.message.contains(almost) == false)
    }

    private func mode(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return try #require(attributes[.posixPermissions] as? Int) & 0o777
    }
}
