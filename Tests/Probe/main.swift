// A second process for the disk-cache tests: it shares a cache directory with the test process,
// and can be killed at a chosen point. Every command exits 0 on success; a content mismatch
// exits 3 so the test sees corruption.
//
//   webimage-test-probe write DIR PREFIX COUNT SIZE [LIMIT]    stores COUNT entries, printing "stored N"
//   webimage-test-probe stall DIR KEY SIZE                     writes half an entry, prints "stalled", waits
//   webimage-test-probe hammer DIR SEED OPS KEYS LIMIT         random stores, reads, removes; verifies reads
//   webimage-test-probe remove DIR KEY
//   webimage-test-probe decode FILE                            decodes with the system coders:
//                                                              "ok W×H frames N" or "error …"
@_spi(Testing) import WebImageCore
import WebImageCodecs
import Foundation
import WebImageTestSupport

func open(_ directory: String, limit: Int? = nil, configure: (inout DiskCache.Configuration) -> Void = { _ in }) -> DiskCache {
    var configuration = DiskCache.Configuration()
    configuration.sweepsOnOpen = false
    if let limit { configuration.sizeLimit = limit }
    configure(&configuration)
    do {
        return try DiskCache(directory: URL(fileURLWithPath: directory), configuration: configuration)
    } catch {
        FileHandle.standardError.write(Data("cannot open \(directory): \(error)\n".utf8))
        exit(2)
    }
}

/// Prints a line unbuffered: the test waits for it while we keep running.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { exit(64) }
let directory = arguments[2]

switch arguments[1] {
case "write":
    let prefix = arguments[3], count = Int(arguments[4])!, size = Int(arguments[5])!
    let cache = open(directory, limit: arguments.count > 6 ? Int(arguments[6]) : nil)
    for index in 0..<count {
        let key = "\(prefix)-\(index)"
        try cache.blocking.store(testPayload(forKey: key, size: size), forKey: ImageCacheKey(key), metadata: .init(url: key))
        say("stored \(index)")
    }

case "stall":
    let key = arguments[3], size = Int(arguments[4])!
    let cache = open(directory) { configuration in
        configuration.afterPartialWrite = {
            say("stalled")
            _ = readLine()  // blocks until the test kills us
        }
    }
    try cache.blocking.store(testPayload(forKey: key, size: size), forKey: ImageCacheKey(key))
    say("finished")

case "hammer":
    let seed = UInt64(arguments[3])!, operations = Int(arguments[4])!, keys = Int(arguments[5])!, limit = Int(arguments[6])!
    let cache = open(directory, limit: limit)
    var random = seed
    func next() -> Int {
        random = random &* 6364136223846793005 &+ 1442695040888963407
        return Int(truncatingIfNeeded: random >> 33)
    }
    var hits = 0
    for _ in 0..<operations {
        let key = "shared-\(next() % keys)"
        let size = 1000 + Int(key.dropFirst(7))! * 37  // fixed per key, so any process can verify it
        switch next() % 10 {
        case 0..<4:
            try cache.blocking.store(testPayload(forKey: key, size: size), forKey: ImageCacheKey(key))
        case 4:
            cache.blocking.removeEntry(forKey: ImageCacheKey(key))
        default:
            if let data = cache.blocking.data(forKey: ImageCacheKey(key)) {
                guard data == testPayload(forKey: key, size: size) else {
                    say("corrupt \(key)")
                    exit(3)
                }
                hits += 1
            }
        }
    }
    say("hits \(hits)")

case "remove":
    open(directory).blocking.removeEntry(forKey: ImageCacheKey(arguments[3]))

case "decode":
    // `directory` is the file here.
    do {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory))
        let image = try CoderRegistry.system().decode(data)
        let frames = image.animation?.frames.count ?? 1
        say("ok \(image.image.width)×\(image.image.height) frames \(frames)")
    } catch let error as ImageError {
        say("error \(error)")
    }

default:
    exit(64)
}
