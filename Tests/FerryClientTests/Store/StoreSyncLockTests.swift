@testable import FerryClient
import FerryCore
import FerryTesting
import Foundation
import Testing

/// The lock that keeps a shared store's syncs to one process at a time.
@Suite("Store sync lock")
struct StoreSyncLockTests {
    @Test("two holders exclude each other; the second gets in once the first lets go")
    func exclusive() async throws {
        let folder = try TemporaryFolder()
        let path = folder.url.path + "/store.sqlite.sync-lock"
        let first = StoreSyncLock(path: path), second = StoreSyncLock(path: path)
        #expect(try first.tryAcquire())
        #expect(try !second.tryAcquire(), "one holder at a time, even within one process")
        let waiting = Task { try await second.acquire(poll: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(100))
        first.release()
        try await waiting.value
        #expect(try !first.tryAcquire())
        second.release()
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int ?? 0) & 0o077 == 0, "owner-only")
    }

    @Test("a process killed while holding the lock does not block the next")
    func killedHolder() async throws {
        let folder = try TemporaryFolder()
        let path = folder.url.path + "/store.sqlite.sync-lock"
        // util-linux's flock(1) takes the same advisory lock and (-o) keeps it to itself while its child sleeps: a process holding it, to be killed.
        let holder = try ChildProcess("flock", arguments: ["-o", path, "sleep", "60"], environment: ["PATH": "/usr/bin:/bin"], standardOutput: .null, standardError: .null)
        let lock = StoreSyncLock(path: path)
        try await eventually("flock(1) never took the lock") {
            if try lock.tryAcquire() {
                lock.release()
                return false
            }
            return true
        }
        holder.signal(SIGKILL)
        _ = holder.waitUntilExit()
        try await eventually("the killed holder's lock was not released", timeout: .seconds(10)) { try lock.tryAcquire() }
        lock.release()
    }

    @Test("a sync of a store file takes the lock: while another process holds it, the sync waits")
    func syncWaitsForTheLock() async throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appending(path: "store.sqlite")
        let store = try LocalStore(fileURL: file, schema: StoreFixture.schema, defaultSpace: UUID())
        let other = StoreSyncLock(path: file.path + ".sync-lock")
        #expect(try other.tryAcquire())
        let engine = SyncEngine(store: store, remote: FakeSyncRemote(), configuration: .manualSync())
        let result = await engine.backgroundSync(timeLimit: .milliseconds(500))
        #expect(result == .stoppedAtDeadline, "it waited for the lock until the deadline: \(result)")
        other.release()
        guard case .completed = await engine.backgroundSync(timeLimit: .seconds(30)) else {
            Issue.record("the sync did not run once the lock was free")
            return
        }
    }
}
