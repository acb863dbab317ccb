import Foundation
import WebImageTestSupport

/// A Python package a suite drives (a URL builder from PyPI), installed when it is missing the
/// way `scripts/deps.sh` installs it (`python3 -m pip install`, else `--user`), so that a
/// missing client fails the suite instead of passing it unchecked.
enum PythonClient {
    /// libthumbor, thumbor's own URL builder.
    static let libthumbor = installed(module: "libthumbor", package: "libthumbor")
    /// The `imgproxy` package, an imgproxy URL builder.
    static let imgproxy = installed(module: "imgproxy", package: "imgproxy")

    /// Why a suite could not get its client's URLs: thrown, so the test fails.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `nil` when `import module` works (after installing `package` if it did not), else why not.
    /// Run once per package and process: the statics above hold the answer.
    private static func installed(module: String, package: String) -> String? {
        let env = URL(fileURLWithPath: "/usr/bin/env")
        func imports() -> Bool { (try? CommandRun(env, ["python3", "-c", "import \(module)"]).status == 0) ?? false }
        if imports() { return nil }
        var errors = ""
        for extra in [[], ["--user"]] {
            let run = try? CommandRun(env, ["python3", "-m", "pip", "install", "--quiet", "--disable-pip-version-check"] + extra + [package])
            errors += run?.stderr ?? "python3 could not be started\n"
            if run?.status == 0, imports() { return nil }
        }
        return "\(module) is missing and `python3 -m pip install \(package)` failed: \(errors.suffix(2000))"
    }
}
