import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for tests and benchmarks that run `ferry`, `git` or `python3`.
///
/// Not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` to close inherited descriptors and copies
/// each whole 256-byte `d_name`, reading past glibc's buffer now and then; a test process with many open sockets
/// crashed with SIGSEGV inside `Process.run()` (swiftlang/swift-corelibs-foundation#5472). Here the child closes
/// every descriptor above 2 with glibc's `posix_spawn_file_actions_addclosefrom_np`, and a thread of its own waits
/// for the exit.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// A pipe this object holds the other end of.
        case pipe
        /// `/dev/null`.
        case null
        /// The same as this process's.
        case inherit
    }

    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The child's process id.
    public let processIdentifier: pid_t
    /// The read end of the child's standard output, when it is a pipe.
    public let standardOutput: FileHandle?
    /// The read end of the child's standard error, when it is a pipe.
    public let standardError: FileHandle?
    /// The write end of the child's standard input, when it is a pipe.
    public let standardInput: FileHandle?
    private let exit = ExitState()

    private final class ExitState: Sendable {
        let status = Mutex<Int32?>(nil)
        let exited = DispatchSemaphore(value: 0)
    }

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments` and exactly `environment`.
    /// - Parameter onExit: called once, on the waiting thread, with the exit status (or the signal's number).
    public init(
        _ executable: String, arguments: [String], environment: [String: String], currentDirectory: String? = nil,
        standardInput input: Stream = .null, standardOutput output: Stream = .pipe, standardError error: Stream = .pipe,
        onExit: (@Sendable (Int32) -> Void)? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        defer { childEnds.forEach { _ = close($0) } }
        for (fd, stream) in [(Int32(0), input), (1, output), (2, error)] {
            switch stream {
            case .inherit:
                continue
            case .null:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { throw SpawnError(description: "pipe: \(String(cString: strerror(errno)))") }
                // Only this child gets them (as 0, 1 or 2): other children close everything above 2 anyway.
                ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
                let (childEnd, parentEnd) = fd == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
                childEnds.append(childEnd)
                parentEnds[Int(fd)] = parentEnd
                posix_spawn_file_actions_adddup2(&actions, childEnd, fd)
            }
        }
        guard let closeFrom = Self.closeFrom else {
            parentEnds.compactMap { $0 }.forEach { _ = close($0) }
            throw SpawnError(description: "this C library lacks posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later)")
        }
        _ = closeFrom(&actions, 3)
        if let currentDirectory {
            guard let changeDirectory = Self.changeDirectory else {
                throw SpawnError(description: "this C library lacks posix_spawn_file_actions_addchdir_np (glibc 2.29 or later)")
            }
            _ = changeDirectory(&actions, currentDirectory)
        }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        // The child starts with no signal blocked and the usual dispositions: the spawning thread (a Swift concurrency
        // thread) may block SIGTERM, and a mask is inherited, so `terminate()` would otherwise do nothing.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t(), defaulted = sigset_t()
        sigemptyset(&emptyMask)
        sigemptyset(&defaulted)
        for signal in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&defaulted, signal) }
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaulted)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = executable.contains("/")
            ? posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            : posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            parentEnds.compactMap { $0 }.forEach { _ = close($0) }
            throw SpawnError(description: "could not start \(executable): \(String(cString: strerror(spawned)))")
        }
        processIdentifier = pid
        standardInput = parentEnds[0].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardOutput = parentEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardError = parentEnds[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        let (exit, child) = (exit, pid)
        Thread.detachNewThread {
            var raw: Int32 = 0
            while waitpid(child, &raw, 0) == -1 && errno == EINTR {}
            // Exit code when it exited, else the number of the signal that ended it (as Foundation's Process reports).
            let code = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
            exit.status.withLock { $0 = code }
            exit.exited.signal()
            onExit?(code)
        }
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { exit.status.withLock { $0 == nil } }

    /// Blocks until the child has exited; its exit status, or the number of the signal that ended it.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        if let code = exit.status.withLock({ $0 }) { return code }
        exit.exited.wait()
        exit.exited.signal()  // for any other waiter
        return exit.status.withLock { $0 } ?? -1
    }

    /// The exit status; call after ``waitUntilExit()``.
    public var terminationStatus: Int32 { exit.status.withLock { $0 } ?? -1 }

    /// Sends `signal` unless the child has exited.
    public func signal(_ signal: Int32 = SIGTERM) {
        if isRunning { kill(processIdentifier, signal) }
    }

    /// Sends SIGTERM.
    public func terminate() { signal(SIGTERM) }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    // Swift's Glibc module does not declare these GNU extensions; they are looked up at run time.
    private static let closeFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map { unsafeBitCast($0, to: CloseFrom.self) }
    private static let changeDirectory: ChangeDirectory? = dlsym(nil, "posix_spawn_file_actions_addchdir_np").map { unsafeBitCast($0, to: ChangeDirectory.self) }
}
