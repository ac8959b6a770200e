import Foundation

/// Where a command's password comes from: `--password-stdin`, `FERRY_PASSWORD`, or a no-echo prompt on a
/// terminal. Never from an argument, which other users can read in the process list.
enum PasswordInput {
    static func read(fromStandardInput: Bool, prompt: String) throws -> String {
        if fromStandardInput {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw CommandFailure(message: "--password-stdin was given but standard input held no password", status: 64)
            }
            return line
        }
        if let password = ProcessInfo.processInfo.environment["FERRY_PASSWORD"], !password.isEmpty {
            return password
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CommandFailure(message: "no password: use --password-stdin, set FERRY_PASSWORD, or run on a terminal", status: 64)
        }
        return try promptWithoutEcho(prompt)
    }

    private static func promptWithoutEcho(_ prompt: String) throws -> String {
        FileHandle.standardError.write(Data(prompt.utf8))
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &original)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw CommandFailure(message: "no password entered", status: 64)
        }
        return line
    }
}
