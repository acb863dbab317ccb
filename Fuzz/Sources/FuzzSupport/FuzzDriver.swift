import CFuzzerDriver
import Foundation

/// Runs libFuzzer with the process's arguments. The fuzz targets have their own `main` (this
/// call) rather than libFuzzer's, so that they are ordinary executables built in the same
/// sanitized build as the test suite (see scripts/fuzz.sh).
public enum FuzzDriver {
    /// libFuzzer's callback: the input's bytes and count; returns 0.
    public typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

    public static func run(_ callback: Callback) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
    }
}
