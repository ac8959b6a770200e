import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Clients that ask for a large file and never read it cost `ferry serve` about a chunk each, not the file.
///
/// It reads the server's resident memory, so `scripts/test.sh` runs it alone, after the others.
@Suite("Stalled downloads")
struct StalledDownloadTests {
    @Test("50 stalled downloads of a 50 MiB object grow the server by at most 64 MiB", arguments: TestEngine.available)
    func stalledDownloads(_ engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let served = try await ServedProcess.start(database, schema: "tabletnotes.yaml")
            let server = served.process
            defer { server.killIfRunning() }
            let (base, port, anonKey) = (served.baseURL, served.port, served.anonKey)

            var signUp = URLRequest(url: URL(string: base + "/auth/v1/signup")!)
            signUp.httpMethod = "POST"
            signUp.setValue(anonKey, forHTTPHeaderField: "apikey")
            signUp.setValue("application/json", forHTTPHeaderField: "Content-Type")
            signUp.httpBody = Data(#"{"email":"stall-\#(UUID().uuidString.prefix(8).lowercased())@example.com","password":"correct horse 1"}"#.utf8)
            let (session, _) = try await URLSession.shared.data(for: signUp)
            let json = try #require(try JSONSerialization.jsonObject(with: session) as? [String: Any])
            let token = try #require(json["access_token"] as? String)
            let user = try #require((json["user"] as? [String: Any])?["id"] as? String)

            let path = "/storage/v1/object/sermon-audio/\(user)/stalled.m4a"
            var upload = URLRequest(url: URL(string: base + path)!)
            upload.httpMethod = "POST"
            for (name, value) in ["apikey": anonKey, "Authorization": "Bearer \(token)", "Content-Type": "audio/mp4"] {
                upload.setValue(value, forHTTPHeaderField: name)
            }
            let file = database.folder + "/stalled.m4a"
            try TestFiles.write(file, megabytes: 50, seed: 9)
            let (_, uploaded) = try await URLSession.shared.upload(for: upload, fromFile: URL(fileURLWithPath: file))
            #expect((uploaded as? HTTPURLResponse)?.statusCode == 200)

            // Signing up peaked at scrypt's memory: measure from what the server holds now.
            let before = try SermonAudioCrashTests.memory(server.processIdentifier, "VmRSS:")
            var readers: [RawConnection] = []
            defer { readers.forEach { $0.close() } }
            for _ in 0..<50 {
                let reader = try RawConnection(port: port, receiveBuffer: 4096)
                reader.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\napikey: \(anonKey)\r\nAuthorization: Bearer \(token)\r\n\r\n")
                readers.append(reader)
            }
            var growth = 0
            for _ in 0..<4 {
                try await Task.sleep(for: .seconds(1))
                growth = max(growth, try SermonAudioCrashTests.memory(server.processIdentifier, "VmRSS:") - before)
            }
            #expect(growth <= 64 << 20, "50 stalled downloads grew the server by \(growth >> 20) MiB")
            print("stalled downloads on \(engine): server resident memory \(before >> 20) MiB before, +\(growth >> 20) MiB with 50 stalled readers of 50 MiB")
        }
    }
}
