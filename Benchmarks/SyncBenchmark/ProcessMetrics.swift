import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the benchmark reads about its own process: CPU time and peak memory.
enum ProcessMetrics {
    /// CPU seconds (user + system, every thread) this process has used so far. On a shared machine whose other
    /// tenants steal time, CPU time moves far less between runs than wall time does.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The process's resident set size now, in MiB (`VmRSS`; 0 where `/proc` does not exist).
    static func residentMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kibibytes = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return kibibytes / 1024
    }

    /// The resident size in MiB after the allocator handed back every free page it could (glibc's `malloc_trim(0)`,
    /// found at run time: the Glibc module does not declare it). Unlike the plain resident size, it falls again when
    /// memory is freed, so a burst of short-lived allocations (1,000 first syncs at once) does not count as held.
    static func trimmedResidentMiB() -> Double {
        #if os(Linux)
        if let symbol = dlsym(nil, "malloc_trim") {
            _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        #endif
        return residentMiB()
    }

    /// Nanoseconds on the system's monotonic clock, which every process of the machine shares: a time taken in one
    /// process compares with a time taken in another.
    static func monotonicNanoseconds() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds  // CLOCK_MONOTONIC on Linux
    }

    /// The process's peak resident set size in MiB.
    ///
    /// On Linux this is `VmHWM` from `/proc/self/status`: the high-water mark of this process image's own
    /// memory. `ru_maxrss` is not used there, because Linux carries the parent's peak into a child across
    /// `posix_spawn`/`exec` (the kernel folds the pre-exec image into the signal struct's `maxrss`), so a child
    /// started by a 500 MiB parent would report 500 MiB. Elsewhere `ru_maxrss` (bytes on macOS).
    static func peakResidentMiB() -> Double {
        #if os(Linux)
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
           let kibibytes = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({ Double($0) }) {
            return kibibytes / 1024
        }
        #endif
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        return Double(usage.ru_maxrss) / 1_048_576
        #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
        #endif
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// The median of `values` (0 when empty).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Progress for people, on stderr (stdout carries the table and the JSON).
func progress(_ message: String) {
    FileHandle.standardError.write(Data("[\(Date().formatted(.iso8601))] \(message)\n".utf8))
}
