import Testing

/// The parent of every vault suite, run one test at a time: each test spawns `git` processes, libgit2 work and
/// sometimes a Python HTTP server, and running dozens at once on a 2-core machine starves the timing-sensitive
/// tests of other modules that run alongside.
@Suite(.serialized)
enum VaultTests {}
